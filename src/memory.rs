//! Memory of its own for the few large buffers of a call: a store held whole, the end of
//! a transcript, the text the records are looked for in. Ordinary memory takes a page
//! fault each 4 KiB the first time it is touched, and on a virtual machine the faults of
//! a buffer of a few megabytes cost more than filling it. [`Pages`] are a mapping of
//! whole huge pages where the system has them (Linux, asked with `MADV_HUGEPAGE`): one
//! fault each 2 MiB. Without huge pages they are ordinary memory, as good as any.

/// Bytes in memory of their own: room for a fixed number of bytes, of which a range is
/// filled. The range grows at its end ([`Pages::spare`] and [`Pages::filled`]) or at
/// its front ([`Pages::front`]); the room never grows.
pub(crate) struct Pages {
    map: memmap2::MmapMut,
    /// Where the room starts in `map`: at a huge page's boundary.
    start: usize,
    /// How many bytes there is room for.
    room: usize,
    /// The bytes filled: `from..to` of the room.
    from: usize,
    to: usize,
}

/// The size of a huge page (x86-64's, and most others'): the boundary memory must start
/// on, and the multiple its length must be, for the system to give it huge pages.
const HUGE_PAGE: usize = 2 << 20;

impl Pages {
    /// Room for `room` bytes, none filled; `None` when no memory could be mapped.
    pub(crate) fn new(room: usize) -> Option<Pages> {
        // Whole huge pages, and one more to find the first boundary in. Memory never
        // touched costs nothing: a room larger than what is filled costs only its pages.
        let pages = room.max(1).checked_next_multiple_of(HUGE_PAGE)?;
        let map = memmap2::MmapMut::map_anon(pages.checked_add(HUGE_PAGE)?).ok()?;
        let start = (HUGE_PAGE - map.as_ptr() as usize % HUGE_PAGE) % HUGE_PAGE;
        #[cfg(target_os = "linux")]
        {
            // Only advice: memory without huge pages is ordinary memory.
            let _ = map.advise_range(memmap2::Advice::HugePage, start, pages);
        }
        Some(Pages {
            map,
            start,
            room,
            from: 0,
            to: 0,
        })
    }

    /// [`Pages::new`], filled from its end: [`Pages::front`] adds bytes in front of the
    /// ones filled, which are never moved.
    pub(crate) fn new_from_end(room: usize) -> Option<Pages> {
        let mut pages = Pages::new(room)?;
        pages.from = room;
        pages.to = room;
        Some(pages)
    }

    /// The room after the bytes filled, to be filled next (see [`Pages::filled`]).
    pub(crate) fn spare(&mut self) -> &mut [u8] {
        let (from, to) = (self.start + self.to, self.start + self.room);
        self.map.get_mut(from..to).unwrap_or_default()
    }

    /// Marks `n` more bytes of [`Pages::spare`] filled.
    pub(crate) fn filled(&mut self, n: usize) {
        self.to = self.to.saturating_add(n).min(self.room);
    }

    /// The `n` bytes in front of the ones filled, now counted filled (their contents
    /// what the room held: zeros, if never filled); `None` when there is no room.
    pub(crate) fn front(&mut self, n: usize) -> Option<&mut [u8]> {
        self.from = self.from.checked_sub(n)?;
        let at = self.start + self.from;
        self.map.get_mut(at..at + n)
    }

    /// Appends `bytes`; `false` (and nothing appended) when there is no room.
    pub(crate) fn push(&mut self, bytes: &[u8]) -> bool {
        match self.spare().get_mut(..bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.filled(bytes.len());
                true
            }
            None => false,
        }
    }

    /// Empties it, for other bytes: the memory stays, its pages touched already.
    pub(crate) fn clear(&mut self) {
        self.from = 0;
        self.to = 0;
    }

    /// How many bytes there is room for in front of the ones filled.
    pub(crate) fn in_front(&self) -> usize {
        self.from
    }

    /// How many bytes there is room for.
    pub(crate) fn room(&self) -> usize {
        self.room
    }
}

impl std::ops::Deref for Pages {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.map
            .get(self.start + self.from..self.start + self.to)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_filled_at_either_end_within_the_room_only() {
        for room in [
            0,
            1,
            4096,
            HUGE_PAGE - 1,
            HUGE_PAGE,
            HUGE_PAGE + 1,
            5 * HUGE_PAGE + 3,
        ] {
            let mut back = Pages::new(room).unwrap();
            assert_eq!(back.room(), room);
            assert_eq!(back.map.as_ptr() as usize % 4096, 0);
            assert_eq!((back.map.as_ptr() as usize + back.start) % HUGE_PAGE, 0);
            let bytes: Vec<u8> = (0..room).map(|i| (i % 253) as u8).collect();
            let half = room / 2;
            assert!(back.push(&bytes[..half]));
            assert!(back.push(&bytes[half..]));
            assert_eq!(&*back, &bytes[..]);
            assert!(back.spare().is_empty());
            assert!(!back.push(b"x"));
            back.filled(7);
            assert_eq!(back.len(), room);
            back.clear();
            assert!(back.is_empty());
            assert_eq!(back.spare().len(), room);

            let mut front = Pages::new_from_end(room).unwrap();
            assert!(front.is_empty());
            assert_eq!(front.in_front(), room);
            front
                .front(room - half)
                .unwrap()
                .copy_from_slice(&bytes[half..]);
            front.front(half).unwrap().copy_from_slice(&bytes[..half]);
            assert_eq!(&*front, &bytes[..]);
            assert!(front.front(1).is_none());
            assert_eq!(&*front, &bytes[..]);
        }
    }
}
