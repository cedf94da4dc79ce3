//! Whether a JavaScript engine is sure to compile a `pattern`.
//!
//! Ajv, the validator Gemini CLI checks a tool call with, compiles each `pattern` of a
//! schema as `new RegExp(p, "u")`. Where that throws, the schema does not compile and the
//! harness runs every call unchecked. This module parses the pattern by the grammar of the
//! `u` flag (ECMAScript 2018's, the strict one) and says yes only for a pattern that every
//! engine a harness runs on compiles, with the flag and (for a validator set up without
//! it) without. What it is not sure of it calls no: a feature newer engines added
//! (modifiers `(?i:)`, a name two groups share), `\u{...}`, a Unicode property outside a
//! short list, and a class range with an end beyond U+FFFF, which the two readings see
//! differently. A no only widens precheck's reading of the schema.

use std::collections::HashSet;

/// Whether `new RegExp(pattern)` and `new RegExp(pattern, "u")` both compile, in every
/// engine Gemini CLI runs on (false where not sure).
pub(super) fn compiles(pattern: &str) -> bool {
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        at: 0,
        groups: 0,
        depth: 0,
        names: HashSet::new(),
        backreference: 0,
        named_references: Vec::new(),
    };
    parser.disjunction().is_some()
        && parser.at == parser.chars.len()
        && parser.backreference <= parser.groups
        && (parser.named_references.iter()).all(|name| parser.names.contains(name))
}

/// Groups inside groups past which a pattern is not sure: no schema nests so deep, and a
/// pattern of a million `(` must not exhaust the stack.
const DEEPEST: usize = 64;

/// `None` is a pattern that does not compile (or may not).
type Parsed<T = ()> = Option<T>;

/// One end of a class range, or a set (`\d`, `\p{L}`) that cannot be one.
enum ClassAtom {
    Char(u32),
    Set,
}

struct Parser {
    chars: Vec<char>,
    at: usize,
    /// Capturing groups so far.
    groups: usize,
    /// Groups open here: past [`DEEPEST`], the parser stops (not sure) before the stack ends.
    depth: usize,
    names: HashSet<String>,
    /// The highest `\N` seen: each must name a group, wherever it opens.
    backreference: usize,
    named_references: Vec<String>,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Parsed<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += 1;
        }
        found
    }

    fn expect(&mut self, c: char) -> Parsed {
        self.eat(c).then_some(())
    }

    fn disjunction(&mut self) -> Parsed {
        loop {
            while !matches!(self.peek(), None | Some('|' | ')')) {
                self.term()?;
            }
            if !self.eat('|') {
                return Some(());
            }
        }
    }

    fn term(&mut self) -> Parsed {
        let quantifiable = match self.next()? {
            '^' | '$' => false,
            '\\' if matches!(self.peek(), Some('b' | 'B')) => {
                self.at += 1;
                false
            }
            '\\' => {
                self.atom_escape()?;
                true
            }
            '(' => self.group()?,
            '[' => {
                self.class()?;
                true
            }
            '*' | '+' | '?' | '{' | '}' | ']' => return None,
            _ => true,
        };
        if self.quantifier()? && !quantifiable {
            return None;
        }
        Some(())
    }

    /// Reads a quantifier if one follows: whether there was one.
    fn quantifier(&mut self) -> Parsed<bool> {
        match self.peek() {
            Some('*' | '+' | '?') => self.at += 1,
            Some('{') => {
                self.at += 1;
                let least = self.digits()?;
                if self.eat(',') && self.peek() != Some('}') && self.digits()? < least {
                    return None;
                }
                self.expect('}')?;
            }
            _ => return Some(false),
        }
        self.eat('?');
        Some(true)
    }

    /// A run of decimal digits, as a number that saturates (no digits: `None`).
    fn digits(&mut self) -> Parsed<u64> {
        let start = self.at;
        let mut n: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n.saturating_mul(10).saturating_add(u64::from(d));
            self.at += 1;
        }
        (self.at > start && n < u64::MAX).then_some(n)
    }

    /// After `(`: whether the group may take a quantifier (a lookaround may not).
    fn group(&mut self) -> Parsed<bool> {
        self.depth += 1;
        if self.depth > DEEPEST {
            return None;
        }
        let quantifiable = if self.eat('?') {
            match self.next()? {
                ':' => true,
                '=' | '!' => false,
                '<' if matches!(self.peek(), Some('=' | '!')) => {
                    self.at += 1;
                    false
                }
                '<' => {
                    let name = self.group_name()?;
                    if !self.names.insert(name) {
                        return None;
                    }
                    self.groups += 1;
                    true
                }
                _ => return None,
            }
        } else {
            self.groups += 1;
            true
        };
        self.disjunction()?;
        self.expect(')')?;
        self.depth -= 1;
        Some(quantifiable)
    }

    /// After `<`: an ASCII identifier and `>`.
    fn group_name(&mut self) -> Parsed<String> {
        let mut name = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_alphanumeric() || "_$".contains(*c))
        {
            if name.is_empty() && c.is_ascii_digit() {
                return None;
            }
            name.push(c);
            self.at += 1;
        }
        self.expect('>')?;
        (!name.is_empty()).then_some(name)
    }

    /// After `\` outside a class.
    fn atom_escape(&mut self) -> Parsed {
        match self.peek()? {
            '1'..='9' => {
                let n = self.digits()?;
                self.backreference = self.backreference.max(usize::try_from(n).ok()?);
                Some(())
            }
            'k' => {
                self.at += 1;
                self.expect('<')?;
                let name = self.group_name()?;
                self.named_references.push(name);
                Some(())
            }
            _ => self.class_escape().map(drop),
        }
    }

    /// After `\`: a character escape or a set, as both a class and an atom take it.
    fn class_escape(&mut self) -> Parsed<ClassAtom> {
        let c = self.next()?;
        let char = |c: char| Some(ClassAtom::Char(u32::from(c)));
        match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Some(ClassAtom::Set),
            'p' | 'P' => {
                self.property()?;
                Some(ClassAtom::Set)
            }
            'f' => char('\u{c}'),
            'n' => char('\n'),
            'r' => char('\r'),
            't' => char('\t'),
            'v' => char('\u{b}'),
            'c' => {
                let letter = self.next().filter(char::is_ascii_alphabetic)?;
                Some(ClassAtom::Char(u32::from(letter) % 32))
            }
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => char('\0'),
            'x' => self.hex(2).map(ClassAtom::Char),
            'u' => self.hex(4).map(ClassAtom::Char),
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => char(c),
            _ => None,
        }
    }

    fn hex(&mut self, count: usize) -> Parsed<u32> {
        let mut n = 0;
        for _ in 0..count {
            n = n * 16 + self.next()?.to_digit(16)?;
        }
        Some(n)
    }

    /// After `\p` or `\P`: `{Name}` or `{Name=Value}` from the list every engine knows.
    fn property(&mut self) -> Parsed {
        self.expect('{')?;
        let mut text = String::new();
        loop {
            match self.next()? {
                '}' => break,
                c => text.push(c),
            }
        }
        let known = match text.split_once('=') {
            None => GENERAL_CATEGORIES.contains(&text.as_str()) || BINARY.contains(&text.as_str()),
            Some(("General_Category" | "gc", value)) => GENERAL_CATEGORIES.contains(&value),
            Some(("Script" | "sc" | "Script_Extensions" | "scx", value)) => {
                SCRIPTS.contains(&value)
            }
            Some(_) => false,
        };
        known.then_some(())
    }

    /// After `[`: the class up to its `]`.
    fn class(&mut self) -> Parsed {
        self.eat('^');
        loop {
            if self.eat(']') {
                return Some(());
            }
            let from = self.class_atom()?;
            if self.peek() == Some('-') && self.chars.get(self.at + 1) != Some(&']') {
                self.at += 1;
                let to = self.class_atom()?;
                // Beyond U+FFFF (or at a surrogate) the two readings see other ends.
                let plain = |c: u32| c <= 0xFFFF && !(0xD800..=0xDFFF).contains(&c);
                match (from, to) {
                    (ClassAtom::Char(a), ClassAtom::Char(b)) if a <= b && plain(a) && plain(b) => {}
                    _ => return None,
                }
            }
        }
    }

    fn class_atom(&mut self) -> Parsed<ClassAtom> {
        match self.next()? {
            '\\' => match self.peek()? {
                'b' => {
                    self.at += 1;
                    Some(ClassAtom::Char(8))
                }
                '-' => {
                    self.at += 1;
                    Some(ClassAtom::Char(u32::from('-')))
                }
                _ => self.class_escape(),
            },
            c => Some(ClassAtom::Char(u32::from(c))),
        }
    }
}

/// General_Category values, short and long, as ECMAScript 2018 lists them.
#[rustfmt::skip]
const GENERAL_CATEGORIES: &[&str] = &[
    "C", "Other", "Cc", "Control", "cntrl", "Cf", "Format", "Cn", "Unassigned", "Co",
    "Private_Use", "Cs", "Surrogate", "L", "Letter", "LC", "Cased_Letter", "Ll",
    "Lowercase_Letter", "Lm", "Modifier_Letter", "Lo", "Other_Letter", "Lt",
    "Titlecase_Letter", "Lu", "Uppercase_Letter", "M", "Mark", "Combining_Mark", "Mc",
    "Spacing_Mark", "Me", "Enclosing_Mark", "Mn", "Nonspacing_Mark", "N", "Number", "Nd",
    "Decimal_Number", "digit", "Nl", "Letter_Number", "No", "Other_Number", "P",
    "Punctuation", "punct", "Pc", "Connector_Punctuation", "Pd", "Dash_Punctuation", "Pe",
    "Close_Punctuation", "Pf", "Final_Punctuation", "Pi", "Initial_Punctuation", "Po",
    "Other_Punctuation", "Ps", "Open_Punctuation", "S", "Symbol", "Sc", "Currency_Symbol",
    "Sk", "Modifier_Symbol", "Sm", "Math_Symbol", "So", "Other_Symbol", "Z", "Separator",
    "Zl", "Line_Separator", "Zp", "Paragraph_Separator", "Zs", "Space_Separator",
];

/// Binary properties of ECMAScript 2018, the common ones.
#[rustfmt::skip]
const BINARY: &[&str] = &[
    "ASCII", "ASCII_Hex_Digit", "AHex", "Alphabetic", "Alpha", "Any", "Assigned",
    "Hex_Digit", "Hex", "Ideographic", "Ideo", "Lowercase", "Lower", "Uppercase", "Upper",
    "White_Space", "space", "Emoji", "Math", "Dash",
];

/// Scripts every engine has known since the `u` flag's property escapes.
#[rustfmt::skip]
const SCRIPTS: &[&str] = &[
    "Arabic", "Arab", "Armenian", "Armn", "Bengali", "Beng", "Common", "Zyyy", "Cyrillic",
    "Cyrl", "Devanagari", "Deva", "Georgian", "Geor", "Greek", "Grek", "Han", "Hani",
    "Hangul", "Hang", "Hebrew", "Hebr", "Hiragana", "Hira", "Inherited", "Zinh", "Katakana",
    "Kana", "Latin", "Latn", "Tamil", "Taml", "Thai",
];

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::compiles;

    proptest! {
        /// Any text at all gets an answer: no panic, no overflow, no runaway recursion.
        #[test]
        fn any_text_gets_an_answer(p in "[-\\\\()\\[\\]{}|^$.*+?<>=!:,0-9a-zA-Z\u{1F600}]{0,40}") {
            let _ = compiles(&p);
        }
    }

    #[test]
    fn patterns_both_readings_compile() {
        for p in [
            "",
            "^[A-Z]{3}-\\d+$",
            "^\\S+@\\S+\\.\\S+$",
            "^[a-z0-9._%+-]+$",
            "^(?:\\+?1[-. ]?)?\\(?\\d{3}\\)?[-. ]?\\d{4}$",
            "^(?<year>\\d{4})-(?<month>\\d{2})\\k<month>$",
            "(a)(b)\\2\\1",
            "[\\w-]",
            "[--a]",
            "a{2,}?b{0,3}c{4}",
            "(?=a)(?!b)(?<=c)(?<!d)",
            "\\p{L}+\\P{Lu}\\p{Script=Latin}\\p{gc=Nd}",
            "[\\b\\-\\]\\\\]",
            "\\x41\\u0041\\cJ\\0\\/",
            "a|b||",
            "[^]",
            "[]",
        ] {
            assert!(compiles(p), "{p}");
        }
    }

    #[test]
    fn patterns_the_u_flag_refuses_or_some_engine_may_are_not_sure() {
        for p in [
            "\\d{3}\\-\\d{4}",
            "\\@",
            "a{",
            "a{2,1}",
            "}",
            "]",
            "(",
            ")",
            "*a",
            "a**",
            "^*",
            "(?=a)*",
            "\\b+",
            "\\1",
            "(a)\\2",
            "\\k<x>",
            "(?<x>a)\\k<y>",
            "(?<x>a)(?<x>b)",
            "(?<1x>a)",
            "(?i:a)",
            "(?P<x>a)",
            "[\\d-z]",
            "[z-a]",
            "[\\1]",
            "\\01",
            "\\c1",
            "\\xZZ",
            "\\u{41}",
            "\\p{Foo}",
            "\\p{Script=Klingon}",
            "\\Z",
            "a\\",
            "[a",
            "[\\uD83D\\uDE00-\\uD83D\\uDE4F]",
            "[a-\u{1F600}]",
        ] {
            assert!(!compiles(p), "{p}");
        }
        let deep = |n: usize| format!("{}a{}", "(".repeat(n), ")".repeat(n));
        assert!(compiles(&deep(64)));
        assert!(!compiles(&deep(65)) && !compiles(&deep(1_000_000)));
    }
}
