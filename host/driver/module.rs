//! A kernel image's PTX, loaded into a module; its kernels looked up by name.

use cudarc::driver::sys::{self, CUfunction, CUmodule};
use std::ffi::CString;

use crate::driver::context::{Context, check};
use crate::{Error, Result};

/// Holds its context, so the context outlives it.
#[derive(Debug)]
pub struct Module {
    raw: CUmodule,
    ctx: Context,
    /// Every kernel of the module, loaded when the module is (see [`Module::function`]).
    kernels: Vec<(String, CUfunction)>,
}

/// The names of the PTX's kernels (`.entry NAME(`).
pub(crate) fn entries(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.match_indices(".entry ").filter_map(|(at, m)| {
        let rest = &ptx[at + m.len()..];
        rest.find('(').map(|end| rest[..end].trim())
    })
}

// SAFETY: module handles may be used from any thread of the context.
unsafe impl Send for Module {}
unsafe impl Sync for Module {}

impl Module {
    /// JIT-compiles a kernel image's PTX (`None`: the image was built without the
    /// device toolchain) for the current context's device; `name` names the image in
    /// errors.
    pub fn load(ctx: &Context, name: &str, ptx: Option<&str>) -> Result<Self> {
        let Some(ptx) = ptx else {
            return Err(Error::PtxUnavailable("built without the nvptx toolchain components"));
        };
        ctx.bind()?;
        let src = CString::new(ptx).map_err(|_| Error::Config(format!("the PTX of kernel image `{name}` holds a NUL byte")))?;
        let mut raw = std::ptr::null_mut();
        check(unsafe { sys::cuModuleLoadData(&mut raw, src.as_ptr() as *const _) }, "cuModuleLoadData")?;
        let mut module = Self { raw, ctx: ctx.clone(), kernels: vec![] };
        // Load every kernel now, before any persistent kernel runs: with lazy loading
        // (the default since CUDA 12.2) a function is loaded at its first launch, or at
        // `cuFuncLoad`, and either waits for the context's running kernels; beside a
        // resident persistent kernel that wait never ends (seen on the H200: the first
        // `resident_wait_ticket` launch hung; on the H100, a `cuFuncLoad` of a baseline
        // kernel looked up while the runtime ran).
        for name in entries(ptx) {
            let c = CString::new(name).expect("PTX names have no NUL bytes");
            let mut f = std::ptr::null_mut();
            // SAFETY: `raw` is the module just loaded in the bound context; `c` outlives
            // the call; `f` is written by the driver before `cuFuncLoad` reads it.
            check(unsafe { sys::cuModuleGetFunction(&mut f, raw, c.as_ptr()) }, "cuModuleGetFunction")?;
            check(unsafe { sys::cuFuncLoad(f) }, "cuFuncLoad")?;
            module.kernels.push((name.to_string(), f));
        }
        // Both halves must be built from the same shared types (`resident_shared::SOURCES`
        // says why they may not be). An image made without the build helper may lack
        // the global.
        if let Some(found) = module.global_u64("RESIDENT_SHARED_SOURCES")?
            && found != resident_shared::SOURCES
        {
            return Err(Error::Config(format!(
                "kernel image `{name}` was built from other sources of resident-shared than this program \
                 (fingerprint {found:#x}, want {:#x}): a stale build, as two checkouts sharing one \
                 CARGO_TARGET_DIR leave; `cargo clean -p resident-shared` and build again",
                resident_shared::SOURCES
            )));
        }
        Ok(module)
    }

    /// The `u64` global `name` of the module (a fingerprint of the image's), read with a
    /// synchronous copy; `None` if the module has no such global.
    pub fn global_u64(&self, name: &str) -> Result<Option<u64>> {
        self.ctx.bind()?;
        let c = CString::new(name).expect("global names have no NUL bytes");
        let (mut ptr, mut bytes) = (0, 0);
        // SAFETY: `raw` is this module, loaded in its context (bound above).
        match unsafe { sys::cuModuleGetGlobal_v2(&mut ptr, &mut bytes, self.raw, c.as_ptr()) } {
            sys::CUresult::CUDA_ERROR_NOT_FOUND => return Ok(None),
            r => check(r, "cuModuleGetGlobal")?,
        }
        if bytes != 8 {
            return Ok(None);
        }
        let mut v = 0u64;
        // SAFETY: the global holds 8 bytes at `ptr`; `v` is 8 writable bytes.
        check(unsafe { sys::cuMemcpyDtoH_v2(&raw mut v as *mut std::ffi::c_void, ptr, 8) }, "cuMemcpyDtoH(global)")?;
        Ok(Some(v))
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
        let image = crate::KernelImage::builtin();
        if image.has_ptx() {
            let names: Vec<_> = super::entries(image.ptx()).collect();
            for k in [
                "resident_persistent",
                "resident_one_task",
                "resident_relay",
                "resident_wait_ticket",
                "resident_axpy_flat",
                "resident_pipeline",
                "resident_tree_level",
                "resident_tree_grow",
            ] {
                assert!(names.contains(&k), "{k} among {names:?}");
            }
        }
    }

    /// The built-in image carries the fingerprint of the shared sources this program
    /// was built from (the device's compilation of them equals the host's), as an
    /// 8-byte global the driver reads at load (`RESIDENT_SHARED_SOURCES`).
    #[test]
    fn builtin_image_carries_the_shared_fingerprint() {
        let image = crate::KernelImage::builtin();
        if image.has_ptx() {
            let ptx = image.ptx();
            let at = ptx.find("RESIDENT_SHARED_SOURCES[8] = {").expect("the global in the PTX");
            let rest = &ptx[at..];
            let list = &rest[rest.find('{').unwrap() + 1..rest.find('}').unwrap()];
            let bytes: Vec<u8> = list.split(',').map(|b| b.trim().parse().unwrap()).collect();
            assert_eq!(bytes, resident_shared::SOURCES.to_le_bytes());
        }
    }
}
