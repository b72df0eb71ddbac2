//! A hint to the processor to bring a value into its cache ahead of use.
//!
//! With thousands of flows the engine's state (links, their propagation pipes, agents) is far
//! larger than the caches, and the next event's state is usually not cached: the loop asks for
//! the state of the next two events before handling the current one, so those loads overlap the
//! current event's work. A hint only: no effect on results.

/// Asks for the cache line holding `value` (no-op off x86-64).
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 processor has (it is part of the
    // x86-64 baseline the compiler targets); a prefetch never faults or reads into the program,
    // and the address is that of a live reference.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(value).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
