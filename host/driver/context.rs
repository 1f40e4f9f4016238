//! Driver calls as `Result`s, and the one question asked before any of them: is there a
//! driver and a device at all?

use cudarc::driver::sys::{self, CUresult};
use std::ffi::CStr;
use std::sync::{Arc, Mutex, MutexGuard};

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

/// A driver and at least one device.
pub(crate) fn gpu_present() -> bool {
    device_count().is_ok_and(|n| n > 0)
}

/// Number of CUDA devices, or an error if there is no driver.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    cudarc::driver::result::init().map_err(|e| Error::Driver { call: "cuInit", code: e.0 as u32, name: format!("{e:?}") })?;
    let n = cudarc::driver::result::device::get_count().map_err(|e| Error::Driver {
        call: "cuDeviceGetCount",
        code: e.0 as u32,
        name: format!("{e:?}"),
    })?;
    Ok(n as usize)
}

/// The CUDA version the driver supports, as (major, minor); an error without a driver.
pub fn driver_version() -> Result<(u32, u32)> {
    device_count()?;
    let mut version = 0;
    // SAFETY: the driver is initialised (above); it writes one int.
    check(unsafe { sys::cuDriverGetVersion(&mut version) }, "cuDriverGetVersion")?;
    Ok((version as u32 / 1000, version as u32 % 1000 / 10))
}

/// What this process knows about one device's primary context, across runtimes.
#[derive(Default)]
struct DeviceState {
    /// Our live retains (`Context` values, not clones).
    live: usize,
    /// A runtime on it died of a device fault: the context holds a sticky error until
    /// it is reset, which is safe once `live` is zero.
    faulted: bool,
    /// A persistent kernel that would not stop is still resident: nothing new can run.
    wedged: bool,
    /// A runtime of this process lives on it ([`RuntimeClaim`]).
    runtime: bool,
}

/// Per device ordinal. Taken around every retain and release, so that a reset never
/// races a retain of ours.
static DEVICES: Mutex<Vec<DeviceState>> = Mutex::new(Vec::new());

fn devices() -> MutexGuard<'static, Vec<DeviceState>> {
    DEVICES.lock().unwrap_or_else(|e| e.into_inner())
}

fn driver_err(call: &'static str, e: cudarc::driver::DriverError) -> Error {
    Error::Driver { call, code: e.0 as u32, name: format!("{e:?}") }
}

/// A device held by a runtime of this process ([`Context::claim_runtime`]).
#[derive(Debug)]
pub(crate) struct RuntimeClaim {
    ordinal: usize,
}

impl Drop for RuntimeClaim {
    fn drop(&mut self) {
        devices()[self.ordinal].runtime = false;
    }
}

/// A retained primary context of one device, bound to the calling thread on demand.
///
/// Fault recovery: after a trap or an illegal address the primary context holds a
/// sticky error and every call on it fails. The runtime that saw the fault marks the
/// device ([`Context::mark_faulted`]); the next `Context::new` on it, once no `Context`
/// of the faulted runtime is alive, resets the primary context
/// (`cuDevicePrimaryCtxReset_v2`) before retaining it afresh. A sticky error that no
/// runtime of ours recorded (found by a probe) is handled the same way. Resetting
/// destroys every allocation in the primary context: other libraries of the process
/// that share it lose theirs too, which after a sticky error is already the case.
#[derive(Clone, Debug)]
pub struct Context {
    inner: Arc<Retained>,
}

#[derive(Debug)]
struct Retained {
    cuda: Option<Arc<cudarc::driver::CudaContext>>,
    ordinal: usize,
}

impl Drop for Retained {
    fn drop(&mut self) {
        let mut d = devices();
        // Releases the primary context (cudarc's drop); the last release resets it.
        drop(self.cuda.take());
        d[self.ordinal].live -= 1;
    }
}

impl Context {
    pub fn new(ordinal: usize) -> Result<Self> {
        if device_count()? <= ordinal {
            return Err(Error::NoDevice);
        }
        let mut d = devices();
        if d.len() <= ordinal {
            d.resize_with(ordinal + 1, DeviceState::default);
        }
        let st = &mut d[ordinal];
        if st.wedged {
            return Err(Error::DeviceFault(format!(
                "a persistent kernel of an earlier runtime on device {ordinal} never stopped (a task that ignores abort); restart the process"
            )));
        }
        if st.faulted {
            if st.live > 0 {
                return Err(still_held(ordinal, st.live));
            }
            // After the last release the driver has reset the context already; the
            // explicit reset covers retains we do not know of. Its result does not
            // matter: the probe below decides whether the context is usable.
            if let Err(e) = reset(ordinal) {
                crate::util::report::report!(warn, "resetting device {ordinal}'s primary context after a fault: {e}");
            }
            st.faulted = false;
        }
        let mut cuda = match cudarc::driver::CudaContext::new(ordinal) {
            Ok(c) => c,
            // The retain itself reports a sticky error (seen on the H200 after an illegal
            // address): reset once nothing of ours holds the context, then retain again.
            Err(e) if st.live == 0 => {
                crate::util::report::report!(warn, "device {ordinal}'s context reports {e:?}; resetting it");
                reset(ordinal)?;
                // On the H200 here (driver 580, 2026-11-23) the retain still failed after
                // a reset when the fault was an illegal address or a trap: CUDA documents
                // such errors as unrecoverable in the process.
                cudarc::driver::CudaContext::new(ordinal).map_err(|e| {
                    Error::DeviceFault(format!(
                        "device {ordinal} is in a sticky error state ({e:?}) that a context reset did not clear; CUDA cannot recover from it in this process: restart the process"
                    ))
                })?
            }
            Err(e) => return Err(driver_err("cuDevicePrimaryCtxRetain", e)),
        };
        if let Err(e) = probe() {
            // A sticky error from work we did not see: reset if nothing of ours uses it.
            if st.live > 0 {
                return Err(Error::DeviceFault(format!("device {ordinal}'s context is in an error state ({e}) and still in use")));
            }
            drop(cuda);
            reset(ordinal)?;
            cuda = cudarc::driver::CudaContext::new(ordinal).map_err(|e| driver_err("cuDevicePrimaryCtxRetain", e))?;
            probe()?;
        }
        st.live += 1;
        Ok(Self { inner: Arc::new(Retained { cuda: Some(cuda), ordinal }) })
    }

    fn cuda(&self) -> &cudarc::driver::CudaContext {
        self.inner.cuda.as_ref().expect("live until drop")
    }

    /// Makes this context current on the calling thread (cheap when it already is).
    /// Every public entry point that calls the driver does this first, since producers
    /// may be any thread.
    pub fn bind(&self) -> Result<()> {
        self.cuda().bind_to_thread().map_err(|e| driver_err("cuCtxSetCurrent", e))
    }

    pub fn attribute(&self, a: sys::CUdevice_attribute) -> Result<i32> {
        self.cuda().attribute(a).map_err(|e| driver_err("cuDeviceGetAttribute", e))
    }

    pub fn name(&self) -> String {
        self.cuda().name().unwrap_or_else(|_| "CUDA device".into())
    }

    /// Marks the device as holding a runtime of this process until the claim drops;
    /// `DeviceInUse` if one holds it already. A second runtime on a device would hang,
    /// not fail: loading its module, and later freeing its pinned memory, wait for
    /// every kernel of the context to finish (docs/architecture.md, "Pitfalls"), and
    /// the first runtime's persistent kernel never does while it lives. The claim is
    /// dropped after every allocation of its runtime is freed; a backend whose kernel
    /// would not stop is forgotten with its claim, so the device stays claimed.
    pub(crate) fn claim_runtime(&self) -> Result<RuntimeClaim> {
        let mut d = devices();
        let st = &mut d[self.inner.ordinal];
        if st.runtime {
            return Err(Error::DeviceInUse(self.inner.ordinal));
        }
        st.runtime = true;
        Ok(RuntimeClaim { ordinal: self.inner.ordinal })
    }

    /// `DeviceInUse` while a runtime of this process holds the device: what would load
    /// a module there (`Device::new`) would wait for its persistent kernel forever.
    pub(crate) fn check_no_runtime(&self) -> Result<()> {
        if devices()[self.inner.ordinal].runtime { Err(Error::DeviceInUse(self.inner.ordinal)) } else { Ok(()) }
    }

    /// The raw context handle (for calls that name two contexts: peer copies).
    pub fn raw(&self) -> sys::CUcontext {
        self.cuda().cu_ctx()
    }

    /// The device's ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ordinal
    }

    /// Free and total device memory (`cuMemGetInfo`), in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        self.bind()?;
        let (mut free, mut total) = (0, 0);
        check(unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) }, "cuMemGetInfo")?;
        Ok((free, total))
    }

    /// Whether a runtime marked this device's context as faulted (it is reset before
    /// its next use).
    pub fn is_faulted(&self) -> bool {
        devices()[self.inner.ordinal].faulted
    }

    /// This device's context holds a sticky error: the next `Context::new` resets it
    /// once every `Context` of now is gone.
    pub fn mark_faulted(&self) {
        devices()[self.inner.ordinal].faulted = true;
    }

    /// A kernel on this device would not stop: refuse new contexts on it (they could
    /// never run, and resetting would pull memory from under the running kernel).
    pub fn mark_wedged(&self) {
        devices()[self.inner.ordinal].wedged = true;
    }
}

fn still_held(ordinal: usize, live: usize) -> Error {
    Error::DeviceFault(format!(
        "device {ordinal} faulted and {live} handle(s) on its context are still alive (the faulted runtime's buffers, tickets, task lists, or a stream::Device); drop them before creating a new runtime"
    ))
}

/// Destroys everything in the device's primary context and clears its sticky error.
fn reset(ordinal: usize) -> Result<()> {
    let dev = cudarc::driver::result::device::get(ordinal as i32).map_err(|e| driver_err("cuDeviceGet", e))?;
    check(unsafe { sys::cuDevicePrimaryCtxReset_v2(dev) }, "cuDevicePrimaryCtxReset")
}

/// Whether the current context is usable: a query of the legacy stream returns the
/// sticky error of an earlier fault, and never blocks.
fn probe() -> Result<()> {
    match unsafe { sys::cuStreamQuery(std::ptr::null_mut()) } {
        CUresult::CUDA_SUCCESS | CUresult::CUDA_ERROR_NOT_READY => Ok(()),
        r => check(r, "cuStreamQuery(probe)"),
    }
}
