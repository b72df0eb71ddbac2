//! A hint to the processor to bring a value into its cache ahead of use.
//!
//! With thousands of flows the engine's state (links, their propagation pipes, agents) is far
//! larger than the caches, and the next event's state is usually not cached: the loop asks for
//! the state of the next two events before handling the current one, so those loads overlap the
//! current event's work, and the pass that samples every flow's state at the end of a bin asks
//! for the agents a few flows ahead. A hint only: no effect on results.

/// Asks for the cache line holding `value` (no-op off x86-64).
#[inline(always)]
pub(crate) fn prefetch<T>(value: &T) {
    prefetch_address(std::ptr::from_ref(value).cast::<u8>());
}

/// Asks for every cache line of `value` (at most the first 1 KiB): for a record that a caller
/// reads in several places, such as an agent whose state is sampled.
#[inline(always)]
pub(crate) fn prefetch_whole<T>(value: &T) {
    let start = std::ptr::from_ref(value).cast::<u8>();
    let bytes = std::mem::size_of::<T>().min(1024);
    let mut offset = 0;
    while offset < bytes {
        // Inside the value: `offset` is below its size.
        prefetch_address(start.wrapping_add(offset));
        offset += 64;
    }
}

/// Asks for the cache line at `address`, which must lie within a live value.
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has (it is part of the
    // x86-64 baseline the compiler targets); a prefetch never faults or reads into the program,
    // and the callers pass addresses within live references.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
