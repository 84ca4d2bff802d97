//! The policies' allocator: one contiguous run of blocks from the end of
//! the data, reused by size class.
//!
//! policy-server evaluates every request in a fresh instance, so each page
//! of linear memory a guest touches is a page fault, and a fault costs a
//! good part of what a rule's own reading of a request does (measured
//! here: 1–3 µs, 1–3 % of an evaluation). wasi-libc's `malloc` writes a
//! record at the far end of the initial memory on its first call: a page
//! that the evaluation touches for nothing else. Here blocks are carved
//! one after another from `__heap_base`, so an evaluation touches only the
//! pages its allocations occupy (one fewer than with `malloc`, for every
//! policy's benchmark request), and an allocation costs a few
//! instructions.
//!
//! Freed blocks go on a free list per size class and are reused, so an
//! instance that is kept for many evaluations (kwctl, the benchmark's warm
//! instance) does not grow; the block at the top is given back to the run
//! at once, and the top block grows in place, which is how a `Vec` or a
//! response being built grows. Classes are multiples of 16 bytes up to
//! 256, then four per power of two, so a block wastes less than a quarter
//! of its size. There is no coalescing: an evaluation is short and its
//! allocations small.
//!
//! [`Run`] is the allocator over any [`Memory`]; on wasm the global
//! allocator is a [`Run`] over linear memory, and the unit tests run it
//! over a buffer.

// The one place in the bundle with `unsafe` code: an allocator hands out
// raw memory and keeps its free lists inside the blocks it manages.
#![allow(unsafe_code)]

use core::alloc::Layout;

/// The smallest block and the alignment every block has.
const GRAIN: usize = 16;
/// Classes up to 256 bytes, one per multiple of [`GRAIN`].
const SMALL_CLASSES: usize = 16;
/// Four classes per power of two above 256 bytes, up to 2^31.
const CLASSES: usize = SMALL_CLASSES + 4 * 23;

/// The class of a block for `size` bytes, and the block's size.
fn class(size: usize) -> Option<(usize, usize)> {
    let size = size.max(1);
    if size <= SMALL_CLASSES * GRAIN {
        let block = size.next_multiple_of(GRAIN);
        return Some((block / GRAIN - 1, block));
    }
    // 2^log < size <= 2^(log + 1) with log >= 8: the block is the next
    // multiple of 2^(log - 2), so 5 to 8 of those.
    let log = usize::try_from(usize::BITS - 1 - (size - 1).leading_zeros()).ok()?;
    let quarter = 1usize.checked_shl(u32::try_from(log - 2).ok()?)?;
    let block = size.checked_next_multiple_of(quarter)?;
    let index = SMALL_CLASSES + (log - 8) * 4 + (block / quarter - 5);
    (index < CLASSES).then_some((index, block))
}

/// The memory a [`Run`] carves blocks from.
pub trait Memory {
    /// The first usable address.
    fn start(&self) -> usize;
    /// The end of the memory now.
    fn end(&self) -> usize;
    /// Makes the memory at least `end` long; `false` if it cannot.
    fn grow_to(&mut self, end: usize) -> bool;
}

/// The allocator's state over a [`Memory`].
#[derive(Debug)]
pub struct Run<M> {
    memory: M,
    /// Where the next new block starts; 0 before the first allocation.
    top: usize,
    /// The first free block of each class, 0 when none; each free block
    /// holds the address of the next.
    free: [usize; CLASSES],
}

/// A block's class and size for `layout`: alignments above [`GRAIN`] are
/// met by rounding the size up to the alignment (and checked on reuse).
fn block_for(layout: Layout) -> Option<(usize, usize)> {
    if layout.align() <= GRAIN {
        class(layout.size())
    } else {
        class(layout.size().checked_next_multiple_of(layout.align())?)
    }
}

fn pointer(address: usize) -> *mut u8 {
    core::ptr::with_exposed_provenance_mut(address)
}

impl<M: Memory> Run<M> {
    pub const fn new(memory: M) -> Self {
        Self {
            memory,
            top: 0,
            free: [0; CLASSES],
        }
    }

    /// A block for `layout`, or null when memory cannot grow.
    ///
    /// # Safety
    /// Every address from `memory.start()` to its end must be memory this
    /// run alone may read and write.
    #[inline(never)]
    pub unsafe fn alloc(&mut self, layout: Layout) -> *mut u8 {
        let Some((class, size)) = block_for(layout) else {
            return core::ptr::null_mut();
        };
        let Some(head) = self.free.get_mut(class) else {
            return core::ptr::null_mut();
        };
        if *head != 0 && *head % layout.align() == 0 {
            let block = *head;
            // SAFETY: a listed block is free, ours, and holds the next one.
            *head = unsafe { pointer(block).cast::<usize>().read() };
            return pointer(block);
        }
        self.carve(size, layout.align().max(GRAIN))
            .map_or(core::ptr::null_mut(), pointer)
    }

    /// A new block of `size` bytes at the top of the run.
    fn carve(&mut self, size: usize, align: usize) -> Option<usize> {
        if self.top == 0 {
            self.top = self.memory.start().checked_next_multiple_of(GRAIN)?;
        }
        let start = self.top.checked_next_multiple_of(align)?;
        let end = start.checked_add(size)?;
        self.reach(end)?;
        self.top = end;
        Some(start)
    }

    /// Grows the memory to `end` if it is shorter.
    fn reach(&mut self, end: usize) -> Option<()> {
        (end <= self.memory.end() || self.memory.grow_to(end)).then_some(())
    }

    /// Takes back the block at `ptr`.
    ///
    /// # Safety
    /// `ptr` must come from this run's `alloc` or `realloc` with `layout`,
    /// and not be used after.
    #[inline(never)]
    pub unsafe fn dealloc(&mut self, ptr: *mut u8, layout: Layout) {
        let Some((class, size)) = block_for(layout) else {
            return;
        };
        let block = ptr.addr();
        if block.checked_add(size) == Some(self.top) {
            self.top = block;
            return;
        }
        if let Some(head) = self.free.get_mut(class) {
            // SAFETY: the block is ours, free, and at least 16 bytes.
            unsafe { ptr.cast::<usize>().write(*head) };
            *head = block;
        }
    }

    /// The block at `ptr` resized to `new_size` bytes: the same block when
    /// its class fits or it is the top block, else a copy.
    ///
    /// # Safety
    /// As [`Run::dealloc`], and `new_size` must not overflow when rounded
    /// up to the alignment.
    #[inline(never)]
    pub unsafe fn realloc(&mut self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
            return core::ptr::null_mut();
        };
        let (Some((old_class, old_size)), Some((new_class, new_block_size))) =
            (block_for(layout), block_for(new_layout))
        else {
            return core::ptr::null_mut();
        };
        if old_class == new_class {
            return ptr;
        }
        let block = ptr.addr();
        if block.checked_add(old_size) == Some(self.top) {
            // The top block: grow or shrink it where it is.
            let Some(end) = block.checked_add(new_block_size) else {
                return core::ptr::null_mut();
            };
            if self.reach(end).is_none() {
                return core::ptr::null_mut();
            }
            self.top = end;
            return ptr;
        }
        // SAFETY: forwarded from the caller.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are ours and distinct (the old one is
            // not free), each at least as long as the bytes copied.
            unsafe {
                core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(target_arch = "wasm32")]
mod global {
    use core::alloc::{GlobalAlloc, Layout};
    use core::arch::wasm32::{memory_grow, memory_size};
    use core::cell::UnsafeCell;

    use super::{Memory, Run};

    /// A wasm page, the unit of `memory.grow`.
    const PAGE: usize = 65536;

    unsafe extern "C" {
        /// The first byte after the stack and the data, set by the linker.
        static __heap_base: u8;
    }

    /// Linear memory after the data.
    #[derive(Debug)]
    pub struct Linear;

    impl Memory for Linear {
        fn start(&self) -> usize {
            core::ptr::addr_of!(__heap_base).expose_provenance()
        }

        fn end(&self) -> usize {
            memory_size::<0>().saturating_mul(PAGE)
        }

        fn grow_to(&mut self, end: usize) -> bool {
            let pages = end.saturating_sub(self.end()).div_ceil(PAGE);
            memory_grow::<0>(pages) != usize::MAX
        }
    }

    /// The global allocator: a [`Run`] over linear memory.
    pub struct Heap(UnsafeCell<Run<Linear>>);

    // SAFETY: wasm32-wasip1 modules have one thread, and no allocator
    // method calls back into another.
    unsafe impl Sync for Heap {}

    // SAFETY: `Run` hands out disjoint blocks of the memory after the data,
    // which nothing else in the module uses.
    unsafe impl GlobalAlloc for Heap {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            unsafe { (*self.0.get()).alloc(layout) }
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            unsafe { (*self.0.get()).dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            unsafe { (*self.0.get()).realloc(ptr, layout, new_size) }
        }
    }

    #[global_allocator]
    static HEAP: Heap = Heap(UnsafeCell::new(Run::new(Linear)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A buffer that can grow up to its capacity, in 64 KiB steps.
    struct Buffer {
        bytes: Vec<u8>,
        end: usize,
        grown: usize,
    }

    impl Buffer {
        fn new(initial: usize, capacity: usize) -> Self {
            let bytes = vec![0u8; capacity];
            let end = bytes.as_ptr().expose_provenance() + initial;
            Self {
                bytes,
                end,
                grown: 0,
            }
        }
    }

    impl Memory for Buffer {
        fn start(&self) -> usize {
            // Not aligned, as `__heap_base` need not be.
            self.bytes.as_ptr().expose_provenance() + 3
        }
        fn end(&self) -> usize {
            self.end
        }
        fn grow_to(&mut self, end: usize) -> bool {
            let limit = self.bytes.as_ptr().expose_provenance() + self.bytes.len();
            let grown = self.end + (end - self.end).next_multiple_of(65536);
            if grown > limit {
                return false;
            }
            self.end = grown;
            self.grown += 1;
            true
        }
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn classes_cover_every_size_with_less_than_a_quarter_wasted() {
        let mut previous = (0, GRAIN);
        for size in (1..70_000).chain([1 << 20, (1 << 31) - 1, 1 << 31]) {
            let (index, block) = class(size).unwrap();
            assert!(block >= size && block % GRAIN == 0, "{size}");
            assert!(size <= 256 || (block - size) * 4 < block, "{size}: {block}");
            assert!(
                index >= previous.0 && (index > previous.0 || block == previous.1),
                "{size}: {index} {block} after {previous:?}"
            );
            assert_eq!(
                class(block),
                Some((index, block)),
                "a block's size is its class"
            );
            previous = (index, block);
        }
        assert_eq!(class(1), Some((0, 16)));
        assert_eq!(class(256), Some((15, 256)));
        assert_eq!(class(257), Some((16, 320)));
        assert_eq!(class(513), Some((20, 640)));
        assert_eq!(class(1 << 31), Some((CLASSES - 1, 1 << 31)));
        assert_eq!(class((1 << 31) + 1), None);
    }

    #[test]
    fn blocks_are_carved_in_a_row_and_reused_by_class() {
        let mut run = Run::new(Buffer::new(1 << 16, 1 << 18));
        unsafe {
            let a = run.alloc(layout(40, 8));
            let b = run.alloc(layout(100, 8));
            assert_eq!(a.addr() % GRAIN, 0);
            assert_eq!(b.addr(), a.addr() + 48, "one after the other");
            run.dealloc(a, layout(40, 8));
            assert_eq!(run.alloc(layout(33, 1)), a, "same class, same block");
            let top = run.top;
            run.dealloc(b, layout(100, 8));
            assert_eq!(run.top, top - 112, "the top block goes back to the run");
            assert_eq!(run.alloc(layout(20, 4)), b);
        }
    }

    #[test]
    fn alignment_beyond_the_grain_is_met() {
        let mut run = Run::new(Buffer::new(1 << 16, 1 << 18));
        unsafe {
            let small = run.alloc(layout(8, 8));
            let wide = run.alloc(layout(100, 64));
            assert_eq!(wide.addr() % 64, 0);
            run.alloc(layout(8, 8));
            run.dealloc(wide, layout(100, 64));
            run.dealloc(small, layout(8, 8));
            let again = run.alloc(layout(100, 128));
            assert_eq!(again.addr() % 128, 0);
        }
    }

    #[test]
    fn the_memory_grows_when_the_run_reaches_its_end_and_fails_cleanly() {
        let mut run = Run::new(Buffer::new(4096, 1 << 18));
        unsafe {
            let big = run.alloc(layout(100_000, 1));
            assert!(!big.is_null());
            assert_eq!(run.memory.grown, 1);
            big.write_bytes(7, 100_000);
            assert!(run.alloc(layout(1 << 20, 1)).is_null(), "past the limit");
            assert!(!run.alloc(layout(16, 1)).is_null(), "and still usable");
        }
    }

    #[test]
    fn realloc_keeps_the_block_when_it_can_and_the_bytes_always() {
        let mut run = Run::new(Buffer::new(1 << 16, 1 << 18));
        unsafe {
            let first = run.alloc(layout(24, 1));
            first.copy_from_nonoverlapping(b"abcdefghijklmnopqrstuvwx".as_ptr(), 24);
            assert_eq!(run.realloc(first, layout(24, 1), 30), first, "same class");
            let grown = run.realloc(first, layout(30, 1), 1000);
            assert_eq!(grown, first, "the top block grows in place");
            let other = run.alloc(layout(16, 1));
            let moved = run.realloc(grown, layout(1000, 1), 5000);
            assert_ne!(moved, grown);
            assert!(moved.addr() > other.addr());
            let mut copied = [0u8; 24];
            moved.copy_to_nonoverlapping(copied.as_mut_ptr(), 24);
            assert_eq!(&copied, b"abcdefghijklmnopqrstuvwx");
            assert_eq!(run.alloc(layout(1000, 1)), grown, "the old block is free");
        }
    }

    /// Random allocations, frees and reallocs against a model: blocks never
    /// overlap and keep their bytes.
    #[test]
    fn blocks_never_overlap_and_keep_their_contents() {
        let mut run = Run::new(Buffer::new(1 << 16, 1 << 24));
        let mut live: Vec<(*mut u8, Layout, u8)> = Vec::new();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..20_000u32 {
            let choice = next() % 10;
            if choice < 5 || live.is_empty() {
                let size = 1 + usize::try_from(next() % 3000).unwrap();
                let align = 1 << (next() % 7);
                let l = layout(size, align);
                let ptr = unsafe { run.alloc(l) };
                assert!(!ptr.is_null() && ptr.addr() % align == 0);
                let fill = u8::try_from(round % 251).unwrap();
                unsafe { ptr.write_bytes(fill, size) };
                live.push((ptr, l, fill));
            } else {
                let at = usize::try_from(next()).unwrap() % live.len();
                let (ptr, l, fill) = live.swap_remove(at);
                let bytes = unsafe { std::slice::from_raw_parts(ptr, l.size()) };
                assert!(bytes.iter().all(|b| *b == fill), "round {round}");
                if choice < 8 {
                    unsafe { run.dealloc(ptr, l) };
                } else {
                    let size = 1 + usize::try_from(next() % 6000).unwrap();
                    let moved = unsafe { run.realloc(ptr, l, size) };
                    assert!(!moved.is_null());
                    let kept = unsafe { std::slice::from_raw_parts(moved, l.size().min(size)) };
                    assert!(kept.iter().all(|b| *b == fill), "round {round}");
                    unsafe { moved.write_bytes(fill, size) };
                    live.push((moved, layout(size, l.align()), fill));
                }
            }
            let mut spans: Vec<(usize, usize)> = live
                .iter()
                .map(|(p, l, _)| (p.addr(), p.addr() + l.size()))
                .collect();
            spans.sort_unstable();
            assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "round {round}");
        }
    }
}
