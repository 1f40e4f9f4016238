//! Driver calls as `Result`s, and the one question asked before any of them: is there a
//! driver and a device at all?

use cudarc::driver::sys::{self, CUresult};
use std::ffi::CStr;
use std::sync::Arc;

use crate::{Error, Result};

/// Turns a driver result into a typed error naming the call.
pub fn check(r: CUresult, call: &'static str) -> Result<()> {
    if r == CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    let mut p: *const std::ffi::c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a pointer to a static string or leaves null.
    unsafe { sys::cuGetErrorName(r, &mut p) };
    let name = if p.is_null() { format!("{r:?}") } else { unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned() };
    Err(Error::Driver { call, code: r as u32, name })
}

/// Whether libcuda can be loaded. Must be true before any other driver call: cudarc
/// panics on a missing library.
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

/// Number of CUDA devices, or an error if there is no driver.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    cudarc::driver::result::init().map_err(|e| Error::Driver { call: "cuInit", code: e.0 as u32, name: format!("{e:?}") })?;
    let n = cudarc::driver::result::device::get_count()
        .map_err(|e| Error::Driver { call: "cuDeviceGetCount", code: e.0 as u32, name: format!("{e:?}") })?;
    Ok(n as usize)
}

/// A retained primary context of one device, bound to the calling thread on demand.
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<cudarc::driver::CudaContext>,
}

impl Context {
    pub fn new(ordinal: usize) -> Result<Self> {
        if device_count()? <= ordinal {
            return Err(Error::NoDevice);
        }
        let inner = cudarc::driver::CudaContext::new(ordinal)
            .map_err(|e| Error::Driver { call: "cuDevicePrimaryCtxRetain", code: e.0 as u32, name: format!("{e:?}") })?;
        Ok(Self { inner })
    }

    /// Makes this context current on the calling thread (cheap when it already is).
    /// Every public entry point that calls the driver does this first, since producers
    /// may be any thread.
    pub fn bind(&self) -> Result<()> {
        self.inner
            .bind_to_thread()
            .map_err(|e| Error::Driver { call: "cuCtxSetCurrent", code: e.0 as u32, name: format!("{e:?}") })
    }

    pub fn attribute(&self, a: sys::CUdevice_attribute) -> Result<i32> {
        self.inner.attribute(a).map_err(|e| Error::Driver { call: "cuDeviceGetAttribute", code: e.0 as u32, name: format!("{e:?}") })
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal()
    }

    pub fn name(&self) -> String {
        self.inner.name().unwrap_or_else(|_| "CUDA device".into())
    }
}
