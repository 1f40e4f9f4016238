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
    /// Every kernel of the module, loaded when the module is (see [`Module::function`]).
    kernels: Vec<(String, CUfunction)>,
}

/// The names of the PTX's kernels (`.entry NAME(`).
fn entries(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.match_indices(".entry ").filter_map(|(at, m)| {
        let rest = &ptx[at + m.len()..];
        rest.find('(').map(|end| rest[..end].trim())
    })
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
        let mut module = Self { raw, ctx: ctx.clone(), kernels: vec![] };
        // Load every kernel now, before any persistent kernel runs: with lazy loading
        // (the default since CUDA 12.2) a function is loaded at its first launch, or at
        // `cuFuncLoad`, and either waits for the context's running kernels; beside a
        // resident persistent kernel that wait never ends (seen on the H200: the first
        // `resident_wait_ticket` launch hung; on the H100, a `cuFuncLoad` of a baseline
        // kernel looked up while the runtime ran).
        for name in entries(PTX) {
            let c = CString::new(name).expect("PTX names have no NUL bytes");
            let mut f = std::ptr::null_mut();
            // SAFETY: `raw` is the module just loaded in the bound context; `c` outlives
            // the call; `f` is written by the driver before `cuFuncLoad` reads it.
            check(unsafe { sys::cuModuleGetFunction(&mut f, raw, c.as_ptr()) }, "cuModuleGetFunction")?;
            check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")?;
            module.kernels.push((name.to_string(), f));
        }
        Ok(module)
    }

    /// The kernel `name`, loaded with the module: safe to ask for while a persistent
    /// kernel runs.
    pub fn function(&self, name: &str) -> Result<CUfunction> {
        match self.kernels.iter().find(|(n, _)| n == name) {
            Some(&(_, f)) => Ok(f),
            None => Err(Error::Driver {
                call: "cuModuleGetFunction",
                code: sys::CUresult::CUDA_ERROR_NOT_FOUND as u32,
                name: format!("CUDA_ERROR_NOT_FOUND: the module has no kernel `{name}`"),
            }),
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        let _ = self.ctx.bind();
        unsafe { sys::cuModuleUnload(self.raw) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn entry_names_are_found() {
        let ptx = ".visible .entry a_b(\n.param .u64 p)\n{ ret; }\n.func (.reg .b32 r) helper(\n)\n.visible .entry c1()\n{}";
        assert_eq!(super::entries(ptx).collect::<Vec<_>>(), ["a_b", "c1"]);
        if !super::PTX.is_empty() {
            let names: Vec<_> = super::entries(super::PTX).collect();
            for k in ["resident_persistent", "resident_persistent_nn", "resident_one_task", "resident_relay", "resident_axpy_flat"] {
                assert!(names.contains(&k), "{k} among {names:?}");
            }
        }
    }
}
