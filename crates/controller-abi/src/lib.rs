//! # The controller plugin ABI (docs/controllers.md, "Native plugins")
//!
//! A congestion controller built as its own shared library, loaded by netsim at run time from a
//! scenario's `controller = "native:/path/libmycc.so"`, without a fork or a rebuild of tfrclab.
//! Host and plugin meet at a C ABI that does not depend on the Rust compiler version either side
//! was built with:
//!
//! - the library exports one symbol, [`ENTRY_SYMBOL`] (`tfrclab_controller`), a C function
//!   with no argument returning a pointer to a static [`Vtable`];
//! - the vtable's first field is the [`ABI_VERSION`] the plugin was built against; the host
//!   refuses any other version before reading further (every version keeps that field first);
//! - the callbacks receive the sender's state ([`State`]) and, for ACKs, an [`Ack`], and write
//!   what they decide into an [`Outcome`] the host owns: keep the window, set one, or fail with a
//!   message.
//!
//! A Rust plugin does not touch any of that: it implements the safe [`Controller`] trait and
//! writes `tfrclab_controller_abi::export_controller!(MyCC);`. The generated glue ([`ffi`])
//! catches panics at the boundary (they become the controller's error, which ends the run) and
//! validates the callback codes. `crates/controller-template` is a complete plugin to copy.

mod controller;
pub mod ffi;
mod params;
mod types;

pub use controller::{CaState, Controller, Decision, Reduction, Window};
pub use params::Params;
pub use types::{
    Ack, AckFn, CreateFn, DestroyFn, Outcome, SignalFn, State, Vtable, MESSAGE_CAPACITY,
    OUTCOME_FAIL, OUTCOME_KEEP, OUTCOME_SET,
};

/// The ABI version this crate describes. The host refuses a plugin whose vtable carries another
/// one: a changed layout read as this one would misread every field.
pub const ABI_VERSION: u32 = 2;

/// The name of the symbol a plugin exports: `extern "C" fn() -> *const Vtable`, NUL-terminated
/// as `dlsym` wants it.
pub const ENTRY_SYMBOL: &[u8] = b"tfrclab_controller\0";

/// Exports `$ty` (a [`Controller`]) as the library's controller: defines the static [`Vtable`]
/// and the [`ENTRY_SYMBOL`] function returning it. Use once per library (a `cdylib`).
#[macro_export]
macro_rules! export_controller {
    ($ty:ty) => {
        /// The vtable of this library's controller.
        static TFRCLAB_CONTROLLER_VTABLE: $crate::Vtable = $crate::ffi::vtable::<$ty>();

        /// The entry point netsim looks up: this library's controller vtable.
        // `no_mangle` is an unsafe attribute (a second definition of the name would clash at
        // link time); this is the one symbol of this name a plugin defines.
        #[allow(unsafe_code)]
        #[no_mangle]
        pub extern "C" fn tfrclab_controller() -> *const $crate::Vtable {
            &TFRCLAB_CONTROLLER_VTABLE
        }
    };
}
