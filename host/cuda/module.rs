//! The embedded PTX, loaded into a module; its kernels looked up by name.

use cudarc::driver::sys::{self, CUfunction, CUmodule};
use std::ffi::CString;

use super::driver::{Context, check};
use crate::{Error, Result};

/// The device crate compiled to PTX by `host/build.rs` (empty without the toolchain
/// components).
pub const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/resident.ptx"));

/// Holds its context, so the context outlives it.
#[derive(Debug)]
pub struct Module {
    raw: CUmodule,
    ctx: Context,
}

// SAFETY: module handles may be used from any thread of the context.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// JIT-compiles the embedded PTX for the current context's device.
    pub fn load_embedded(ctx: &Context) -> Result<Self> {
        if PTX.is_empty() {
            return Err(Error::PtxUnavailable("built without the nvptx toolchain components"));
        }
        ctx.bind()?;
        let src = CString::new(PTX).expect("PTX has no NUL bytes");
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::cuModuleLoadData(&mut raw, src.as_ptr() as *const _) }, "cuModuleLoadData")?;
        Ok(Self { raw, ctx: ctx.clone() })
    }

    pub fn function(&self, name: &str) -> Result<CUfunction> {
        let c = CString::new(name).unwrap();
        let mut f = std::ptr::null_mut();
        check(unsafe { sys::cuModuleGetFunction(&mut f, self.raw, c.as_ptr()) }, "cuModuleGetFunction")?;
        // Load it now: with lazy loading (the default since CUDA 12.2) a function is
        // loaded at its first launch, which waits for the context's running kernels;
        // beside a resident persistent kernel that wait never ends (seen on the H200:
        // the first `resident_wait_ticket` launch hung).
        check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        unsafe { sys::cuModuleUnload(self.raw) };
    }
}
