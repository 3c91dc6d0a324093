//! `BufPool`: the I/O buffers of one worker, allocated once, zeroed, every
//! slot aligned for O_DIRECT. Slot `i` is the buffer of the I/O unit whose
//! `slot` is `i`.

use std::alloc::{self, Layout};
use std::ptr::NonNull;

use crate::host;
use crate::EngineError;

/// `slots` buffers of `size` bytes, each starting on an `align` boundary.
pub struct BufPool {
    base: NonNull<u8>,
    /// `None` when nothing was allocated (zero bytes in all).
    layout: Option<Layout>,
    slots: usize,
    size: usize,
    /// Distance between slot starts: `size` rounded up to `align`.
    stride: usize,
    align: usize,
}

// SAFETY: BufPool owns its allocation exclusively (like a Vec<u8>); the raw
// pointer is not shared with anything else, so moving the pool to another
// thread or sharing `&BufPool` (which only gives `&[u8]`) is sound.
unsafe impl Send for BufPool {}
// SAFETY: see above; `&BufPool` offers no interior mutability.
unsafe impl Sync for BufPool {}

impl BufPool {
    /// Allocates `slots` zeroed buffers of `size` bytes. `align` must be a
    /// power of two or zero; it is raised to the page size.
    pub fn new(slots: usize, size: usize, align: usize) -> Result<Self, EngineError> {
        let page = usize::try_from(host::page_size()).unwrap_or(4096);
        if align != 0 && !align.is_power_of_two() {
            return Err(EngineError::Options(format!(
                "buffer alignment {align} is not a power of two"
            )));
        }
        let align = align.max(page);
        let too_big = || EngineError::Options(format!("{slots} buffers of {size} bytes"));
        let stride = size.checked_next_multiple_of(align).ok_or_else(too_big)?;
        let total = stride.checked_mul(slots).ok_or_else(too_big)?;
        if total == 0 {
            // A dangling pointer with the right alignment serves empty slices.
            let base = NonNull::new(align as *mut u8).ok_or_else(too_big)?;
            return Ok(Self {
                base,
                layout: None,
                slots,
                size,
                stride,
                align,
            });
        }
        let layout = Layout::from_size_align(total, align).map_err(|_| too_big())?;
        // SAFETY: `layout` has a non-zero size (checked above).
        let ptr = unsafe { alloc::alloc_zeroed(layout) };
        let base = NonNull::new(ptr).ok_or(EngineError::OutOfMemory {
            bytes: total,
            align,
        })?;
        Ok(Self {
            base,
            layout: Some(layout),
            slots,
            size,
            stride,
            align,
        })
    }

    /// Number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// Bytes per slot.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The alignment every slot starts on.
    pub fn align(&self) -> usize {
        self.align
    }

    /// The buffer of slot `i`. Panics when `i >= slots()`.
    pub fn slot(&mut self, i: usize) -> &mut [u8] {
        let ptr = self.slot_ptr(i);
        // SAFETY: slot_ptr checked `i`; the slot's `size` bytes lie inside the
        // allocation (or are empty with a non-null aligned pointer), are
        // initialized (alloc_zeroed), and `&mut self` makes this borrow unique.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.size) }
    }

    /// The buffer of slot `i`, read-only. Panics when `i >= slots()`.
    pub fn slot_ref(&self, i: usize) -> &[u8] {
        let ptr = self.slot_ptr(i);
        // SAFETY: as in `slot`; `&self` excludes any `&mut` to the pool.
        unsafe { std::slice::from_raw_parts(ptr, self.size) }
    }

    /// The first `len` bytes of slot `i`, or `None` when the slot does not
    /// exist or is smaller than `len`. For engines checking an `IoUnit`.
    pub(crate) fn get_mut(&mut self, i: usize, len: usize) -> Option<&mut [u8]> {
        if i >= self.slots || len > self.size {
            return None;
        }
        Some(&mut self.slot(i)[..len])
    }

    /// Start of slot `i`, for engines that hand buffers to the kernel and
    /// keep them there after `queue` returns (asynchronous engines). Panics
    /// when `i >= slots()`.
    #[inline]
    pub(crate) fn slot_ptr(&self, i: usize) -> *mut u8 {
        assert!(i < self.slots, "buffer slot {i} of {}", self.slots);
        // SAFETY: i < slots, so i * stride <= total - stride fits in the
        // allocation (for an empty pool stride * slots == 0, so offset 0).
        unsafe { self.base.as_ptr().add(i * self.stride) }
    }

    /// The whole allocation, for registering it with the kernel once.
    #[allow(dead_code)] // for io_uring's fixed buffers
    pub(crate) fn raw_parts(&self) -> (*mut u8, usize) {
        (self.base.as_ptr(), self.stride * self.slots)
    }
}

impl Drop for BufPool {
    fn drop(&mut self) {
        if let Some(layout) = self.layout {
            // SAFETY: `base` came from alloc_zeroed with this very layout and
            // is freed once, here.
            unsafe { alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}

impl std::fmt::Debug for BufPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufPool")
            .field("slots", &self.slots)
            .field("size", &self.size)
            .field("align", &self.align)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_disjoint_and_zeroed() {
        let mut pool = BufPool::new(5, 6000, 0).unwrap();
        let page = host::page_size() as usize;
        assert_eq!(pool.align(), page);
        for i in 0..5 {
            let s = pool.slot(i);
            assert_eq!(s.len(), 6000);
            assert_eq!(s.as_ptr() as usize % page, 0, "slot {i}");
            assert!(s.iter().all(|&b| b == 0));
            s.fill(i as u8 + 1);
        }
        for i in 0..5 {
            assert!(pool.slot_ref(i).iter().all(|&b| b == i as u8 + 1));
        }
    }

    #[test]
    fn larger_alignment_is_kept() {
        let pool = BufPool::new(3, 512, 1 << 16).unwrap();
        for i in 0..3 {
            assert_eq!(pool.slot_ref(i).as_ptr() as usize % (1 << 16), 0);
        }
    }

    #[test]
    fn empty_pools_are_fine() {
        let mut pool = BufPool::new(0, 4096, 0).unwrap();
        assert_eq!(pool.slots(), 0);
        assert!(pool.get_mut(0, 1).is_none());
        let mut pool = BufPool::new(2, 0, 0).unwrap();
        assert!(pool.slot(1).is_empty());
    }

    #[test]
    fn get_mut_checks_slot_and_len() {
        let mut pool = BufPool::new(2, 4096, 0).unwrap();
        assert_eq!(pool.get_mut(1, 4096).map(|b| b.len()), Some(4096));
        assert!(pool.get_mut(1, 4097).is_none());
        assert!(pool.get_mut(2, 1).is_none());
    }

    #[test]
    #[should_panic]
    fn slot_out_of_range_panics() {
        let mut pool = BufPool::new(2, 4096, 0).unwrap();
        pool.slot(2);
    }

    #[test]
    fn bad_alignment_and_overflow_are_errors() {
        assert!(BufPool::new(1, 4096, 3000).is_err());
        assert!(BufPool::new(usize::MAX / 2, 1 << 20, 0).is_err());
    }
}
