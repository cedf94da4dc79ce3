//! Exact decimal numbers read from JSON literals.
//!
//! The gate never compares numbers through a float: `5000 == 5000.0`,
//! `5000.0000000000000001 > 5000`, and `1e400` is a valid, very large number. A value is
//! kept as a sign, a digit string without leading or trailing zeros, and a power of ten,
//! so comparison is exact and needs no big-integer arithmetic.

use std::cmp::Ordering;

use thiserror::Error;

/// Why a JSON number literal could not be read as a decimal.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecimalError {
    /// The text is not a JSON number literal.
    #[error("`{0}` is not a JSON number")]
    Syntax(String),
    /// The exponent does not fit the range the gate compares in.
    #[error(
        "the exponent of `{0}` is out of range: the gate compares exponents from -2^60 to 2^60 (1152921504606846976) exactly"
    )]
    ExponentRange(String),
    /// More digits than the gate compares.
    #[error(
        "`{0}` has more than {MAX_LITERAL_DIGITS} digits (a fixed limit: the gate compares numbers exactly and never rounds)"
    )]
    TooLong(String),
}

/// Most digits (integer and fraction part together, as written) a number literal may
/// have. Far beyond any amount, date or count, and it bounds the work of each exact
/// comparison, which reads every digit.
pub const MAX_LITERAL_DIGITS: usize = 100_000;

/// An exact decimal: `(-1)^neg * digits * 10^exp`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Decimal {
    neg: bool,
    /// ASCII digits, no leading or trailing zeros; empty for zero.
    digits: Vec<u8>,
    exp: i64,
}

/// Exponents beyond this (in absolute value) are refused, so every adjusted exponent
/// fits an `i64`.
const EXP_LIMIT: i64 = 1 << 60;

/// Digits of [`EXP_LIMIT`] (1152921504606846976): an exponent of more significant
/// digits is beyond it, one of as many or fewer is parsed and compared.
const EXP_LIMIT_DIGITS: usize = 19;

impl Decimal {
    /// Reads a JSON number literal (`-?int(.frac)?([eE][+-]?exp)?`).
    pub fn parse(literal: &str) -> Result<Decimal, DecimalError> {
        let bad = || DecimalError::Syntax(literal.to_string());
        let (neg, rest) = match literal.strip_prefix('-') {
            Some(r) => (true, r),
            None => (false, literal),
        };
        let (mantissa, exponent) = match rest.find(['e', 'E']) {
            Some(i) => (rest.get(..i).ok_or_else(bad)?, rest.get(i + 1..)),
            None => (rest, None),
        };
        let (int, frac) = match mantissa.split_once('.') {
            Some((i, f)) => (i, f),
            None => (mantissa, ""),
        };
        let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        let int_ok = int == "0" || (!int.is_empty() && !int.starts_with('0') && all_digits(int));
        let frac_ok = !mantissa.contains('.') || (!frac.is_empty() && all_digits(frac));
        if !int_ok || !frac_ok {
            return Err(bad());
        }
        if int.len() + frac.len() > MAX_LITERAL_DIGITS {
            return Err(DecimalError::TooLong(literal.to_string()));
        }
        let mut exp: i64 = match exponent {
            None => 0,
            Some(e) => {
                let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
                if digits.is_empty() || !all_digits(digits) {
                    return Err(bad());
                }
                // Leading zeros are allowed and count for nothing: the limit is on the
                // exponent's value, however many digits spell it.
                let magnitude = digits.trim_start_matches('0');
                let range = || DecimalError::ExponentRange(literal.to_string());
                let value: i64 = if magnitude.is_empty() {
                    0
                } else if magnitude.len() > EXP_LIMIT_DIGITS {
                    return Err(range());
                } else {
                    magnitude.parse().map_err(|_| range())?
                };
                if value > EXP_LIMIT {
                    return Err(range());
                }
                if e.starts_with('-') { -value } else { value }
            }
        };
        let frac_len = i64::try_from(frac.len())
            .ok()
            .filter(|n| *n <= EXP_LIMIT)
            .ok_or_else(|| DecimalError::ExponentRange(literal.to_string()))?;
        exp -= frac_len;
        let mut digits: Vec<u8> = int.bytes().chain(frac.bytes()).collect();
        let lead = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..lead);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exp += 1;
        }
        if digits.is_empty() {
            return Ok(Decimal::zero());
        }
        Ok(Decimal { neg, digits, exp })
    }

    /// Zero, with no sign.
    pub fn zero() -> Decimal {
        Decimal {
            neg: false,
            digits: Vec::new(),
            exp: 0,
        }
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// True when the value is a whole number.
    pub fn is_integer(&self) -> bool {
        self.exp >= 0
    }

    /// Position of the leading digit: the value's magnitude is in [10^(a-1), 10^a).
    fn adjusted(&self) -> i64 {
        // INVARIANT: digits.len() and |exp| are both far below i64::MAX / 2.
        self.digits.len() as i64 + self.exp
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            (false, false) => {}
        }
        // Same adjusted exponent: the digit strings line up from the left, and trailing
        // zeros were stripped, so plain lexicographic order is numeric order.
        self.adjusted()
            .cmp(&other.adjusted())
            .then_with(|| self.digits.cmp(&other.digits))
    }

    /// The canonical text of the value: plain digits when short, scientific otherwise.
    pub fn to_literal(&self) -> String {
        if self.is_zero() {
            return "0".to_string();
        }
        let sign = if self.neg { "-" } else { "" };
        let digits = String::from_utf8_lossy(&self.digits);
        let len = self.digits.len() as i64;
        if self.exp >= 0 && self.exp + len <= 40 {
            let zeros = "0".repeat(usize::try_from(self.exp).unwrap_or(0));
            return format!("{sign}{digits}{zeros}");
        }
        if self.exp < 0 && -self.exp <= 40 {
            let frac_len = usize::try_from(-self.exp).unwrap_or(0);
            let digits = digits.as_ref();
            return if frac_len >= digits.len() {
                let pad = "0".repeat(frac_len - digits.len());
                format!("{sign}0.{pad}{digits}")
            } else {
                let split = digits.len() - frac_len;
                let (i, f) = digits.split_at(split);
                format!("{sign}{i}.{f}")
            };
        }
        format!("{sign}{digits}e{}", self.exp)
    }
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The most digits an arithmetic result may have. Beyond it an operation gives up
/// (`None`) instead of allocating: `1e999999999 + 1` is a valid question with a
/// billion-digit answer.
pub const MAX_DIGITS: usize = 4096;

/// Exact arithmetic, enough to step around a boundary: one above, one below, the
/// midpoint of two values, floor and ceiling. Each returns `None` when the exact result
/// would need more than [`MAX_DIGITS`] digits.
impl Decimal {
    /// Builds a normalized value from ASCII digits (leading and trailing zeros allowed).
    fn from_parts(neg: bool, mut digits: Vec<u8>, mut exp: i64) -> Decimal {
        let lead = digits.iter().take_while(|&&d| d == b'0').count();
        digits.drain(..lead);
        while digits.last() == Some(&b'0') {
            digits.pop();
            exp += 1;
        }
        if digits.is_empty() {
            return Decimal::zero();
        }
        Decimal { neg, digits, exp }
    }

    /// One.
    pub fn one() -> Decimal {
        Decimal::from_parts(false, vec![b'1'], 0)
    }

    /// The value with the opposite sign.
    pub fn negated(&self) -> Decimal {
        Decimal {
            neg: !self.neg && !self.is_zero(),
            digits: self.digits.clone(),
            exp: self.exp,
        }
    }

    /// Digit values (0-9, most significant first) of the magnitude, scaled to `10^low`
    /// and left-padded to `width`. The caller guarantees `exp >= low` and that it fits.
    fn aligned(&self, low: i64, width: usize) -> Vec<u8> {
        let mut out = vec![0u8; width];
        let shift = usize::try_from(self.exp - low).unwrap_or(0);
        let end = width.saturating_sub(shift);
        let start = end.saturating_sub(self.digits.len());
        for (slot, d) in out.iter_mut().skip(start).zip(&self.digits) {
            *slot = d - b'0';
        }
        out
    }

    /// `self + other`, exactly.
    pub fn checked_add(&self, other: &Decimal) -> Option<Decimal> {
        if self.is_zero() {
            return Some(other.clone());
        }
        if other.is_zero() {
            return Some(self.clone());
        }
        let low = self.exp.min(other.exp);
        let top = self.adjusted().max(other.adjusted());
        let span = usize::try_from(top.checked_sub(low)?).ok()?;
        if span > MAX_DIGITS {
            return None;
        }
        let width = span + 1;
        let a = self.aligned(low, width);
        let b = other.aligned(low, width);
        let (neg, values) = if self.neg == other.neg {
            (self.neg, add_digits(&a, &b))
        } else if a >= b {
            // Same width, most significant first: lexicographic order is numeric order.
            (self.neg, sub_digits(&a, &b))
        } else {
            (other.neg, sub_digits(&b, &a))
        };
        let ascii = values.into_iter().map(|d| d + b'0').collect();
        Some(Decimal::from_parts(neg, ascii, low))
    }

    /// `self - other`, exactly.
    pub fn checked_sub(&self, other: &Decimal) -> Option<Decimal> {
        self.checked_add(&other.negated())
    }

    /// `self / 2`, exactly (a decimal halves into a decimal: times 5, over 10).
    pub fn half(&self) -> Option<Decimal> {
        if self.digits.len() >= MAX_DIGITS {
            return None;
        }
        let mut out = vec![0u8; self.digits.len() + 1];
        let mut carry = 0u8;
        for (slot, d) in out.iter_mut().rev().zip(self.digits.iter().rev()) {
            let v = (d - b'0') * 5 + carry;
            *slot = v % 10 + b'0';
            carry = v / 10;
        }
        if let Some(first) = out.first_mut() {
            *first = carry + b'0';
        }
        Some(Decimal::from_parts(self.neg, out, self.exp.checked_sub(1)?))
    }

    /// The midpoint of two values, exactly.
    pub fn midpoint(&self, other: &Decimal) -> Option<Decimal> {
        self.checked_add(other)?.half()
    }

    /// The whole part toward zero.
    fn truncated(&self) -> Decimal {
        if self.exp >= 0 {
            return self.clone();
        }
        let int_len = self.digits.len() as i64 + self.exp;
        match usize::try_from(int_len).ok().filter(|&n| n > 0) {
            Some(n) => {
                Decimal::from_parts(self.neg, self.digits.get(..n).unwrap_or(&[]).to_vec(), 0)
            }
            None => Decimal::zero(),
        }
    }

    /// The greatest integer not above the value.
    pub fn floor(&self) -> Option<Decimal> {
        if self.is_integer() {
            return Some(self.clone());
        }
        let t = self.truncated();
        if self.neg {
            t.checked_sub(&Decimal::one())
        } else {
            Some(t)
        }
    }

    /// The least integer not below the value.
    pub fn ceil(&self) -> Option<Decimal> {
        if self.is_integer() {
            return Some(self.clone());
        }
        let t = self.truncated();
        if self.neg {
            Some(t)
        } else {
            t.checked_add(&Decimal::one())
        }
    }
}

/// Adds two digit-value vectors of equal length whose sum fits (the first digit of each
/// leaves room for a carry).
fn add_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; a.len()];
    let mut carry = 0u8;
    for ((slot, x), y) in out.iter_mut().rev().zip(a.iter().rev()).zip(b.iter().rev()) {
        let v = x + y + carry;
        *slot = v % 10;
        carry = v / 10;
    }
    out
}

/// `a - b` for digit-value vectors of equal length with `a >= b`.
fn sub_digits(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; a.len()];
    let mut borrow = 0u8;
    for ((slot, x), y) in out.iter_mut().rev().zip(a.iter().rev()).zip(b.iter().rev()) {
        let take = y + borrow;
        if *x >= take {
            *slot = x - take;
            borrow = 0;
        } else {
            *slot = x + 10 - take;
            borrow = 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        Decimal::parse(s).unwrap()
    }

    #[test]
    fn equal_values_written_differently_are_equal() {
        assert_eq!(d("5000"), d("5000.0"));
        assert_eq!(d("5e3"), d("5000"));
        assert_eq!(d("50E+2"), d("5000.000"));
        assert_eq!(d("0.5"), d("5e-1"));
        assert_eq!(d("-0"), d("0"));
        assert_eq!(d("-0.0e7"), d("0"));
    }

    #[test]
    fn order_is_exact_beyond_float_precision() {
        assert!(d("5000.0000000000000001") > d("5000"));
        assert!(d("9007199254740993") > d("9007199254740992"));
        assert!(d("1e400") > d("9".repeat(399).as_str()));
        assert!(d("-1e400") < d("-5"));
        assert!(d("-0.001") < d("0"));
        assert!(d("0.001") > d("-1e999"));
        assert!(d("4999") < d("5000") && d("5001") > d("5000"));
        assert!(d("12") > d("9.99"));
        assert!(d("-12") < d("-9.99"));
    }

    #[test]
    fn malformed_literals_are_refused() {
        for bad in [
            "", "-", "01", "1.", ".5", "1e", "1e+", "+1", "1.2.3", "0x10", "1e5x",
        ] {
            assert!(Decimal::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn huge_exponents_are_refused_not_rounded() {
        assert!(matches!(
            Decimal::parse("1e99999999999999999999"),
            Err(DecimalError::ExponentRange(_))
        ));
        assert!(Decimal::parse("1e999999999").is_ok());
    }

    #[test]
    fn exponents_up_to_two_to_the_sixty_are_compared_however_many_digits_spell_them() {
        // 2^60 = 1152921504606846976 has 19 digits: the limit is on the value.
        for ok in [
            "1e1152921504606846976",
            "1e-1152921504606846976",
            "1e1000000000000000000",
            "1e0000000000000000000005",
            "1E+00000000000000000000000000001152921504606846976",
        ] {
            assert!(Decimal::parse(ok).is_ok(), "{ok}");
        }
        assert_eq!(d("1e0000000000000000000005"), d("100000"));
        assert!(d("1e1152921504606846976") > d("9e1152921504606846975"));
        assert!(d("1e-1152921504606846976") > d("0"));
        assert!(d("-1e1152921504606846976") < d("-1e1000000000000000000"));
        for beyond in [
            "1e1152921504606846977",
            "1e-1152921504606846977",
            "1e9999999999999999999",
            "1e00000000000000000000000000000000000000000000000000000000000000000000001152921504606846977",
        ] {
            let err = Decimal::parse(beyond).unwrap_err();
            assert!(matches!(err, DecimalError::ExponentRange(_)), "{beyond}");
            assert!(err.to_string().contains("from -2^60 to 2^60"), "{err}");
        }
    }

    #[test]
    fn ten_thousand_digits_compare_exactly_and_the_digit_limit_refuses() {
        let nines = "9".repeat(10_000);
        let almost = format!("{nines}.{}", "9".repeat(10_000));
        assert!(d(&nines) < d("1e10000"));
        assert!(d(&almost) > d(&nines));
        assert!(d(&almost) < d("1e10000"));
        assert_eq!(d(&format!("{nines}.0")), d(&nines));
        let limit = "1".repeat(MAX_LITERAL_DIGITS);
        assert!(Decimal::parse(&limit).is_ok());
        let over = format!("0.{}", "0".repeat(MAX_LITERAL_DIGITS));
        assert!(matches!(
            Decimal::parse(&over),
            Err(DecimalError::TooLong(_))
        ));
    }

    #[test]
    fn literal_round_trips() {
        for (input, out) in [
            ("5000.0", "5000"),
            ("0.0500", "0.05"),
            ("-12.5", "-12.5"),
            ("1e400", "1e400"),
        ] {
            assert_eq!(d(input).to_literal(), out);
            assert_eq!(d(&d(input).to_literal()), d(input));
        }
    }

    #[test]
    fn arithmetic_is_exact() {
        let sum = |a: &str, b: &str| d(a).checked_add(&d(b)).unwrap().to_literal();
        assert_eq!(sum("5000", "1"), "5001");
        assert_eq!(sum("4999.5", "0.5"), "5000");
        assert_eq!(sum("-1", "1"), "0");
        assert_eq!(sum("-0.001", "1"), "0.999");
        assert_eq!(sum("1", "-5000.25"), "-4999.25");
        assert_eq!(sum("999", "1"), "1000");
        assert_eq!(d(&sum("1e400", "1")), d(&format!("1{}1", "0".repeat(399))));
        assert_eq!(d("5000").checked_sub(&d("1")).unwrap().to_literal(), "4999");
        assert_eq!(
            d("4999").midpoint(&d("5000")).unwrap().to_literal(),
            "4999.5"
        );
        assert_eq!(d("-3").midpoint(&d("2")).unwrap().to_literal(), "-0.5");
        assert_eq!(d("0.1").midpoint(&d("0.2")).unwrap().to_literal(), "0.15");
        assert!(
            d("1e999999999").checked_add(&d("1")).is_none(),
            "gives up, never allocates"
        );
        assert!(
            d("1e999999999").checked_add(&d("2e999999999")).is_some(),
            "same scale is cheap"
        );
    }

    #[test]
    fn floor_and_ceil() {
        let f = |s: &str| d(s).floor().unwrap().to_literal();
        let c = |s: &str| d(s).ceil().unwrap().to_literal();
        assert_eq!((f("2.5"), c("2.5")), ("2".into(), "3".into()));
        assert_eq!((f("-2.5"), c("-2.5")), ("-3".into(), "-2".into()));
        assert_eq!((f("0.001"), c("0.001")), ("0".into(), "1".into()));
        assert_eq!((f("-0.001"), c("-0.001")), ("-1".into(), "0".into()));
        assert_eq!((f("7"), c("7")), ("7".into(), "7".into()));
        assert_eq!((f("1e-999999"), c("1e-999999")), ("0".into(), "1".into()));
    }
}
