//! NCCL collectives between runtimes' buffers (through cudarc's bindings), for users who
//! outgrow one GPU or one machine: one [`Communicator`] per runtime (per device), made
//! from an id that one rank creates and every rank is handed (by the caller, or by the
//! rendezvous of `crate::multi::launcher` from a launcher's environment: torchrun, mpirun,
//! srun). docs/scaling.md says how to run on several hosts and what is tested where.
//!
//! Ordering with the runtime's tasks: a collective reads and writes a buffer between
//! tasks, not beside them. Wait for the tickets of the tasks that write the buffer
//! first; the collective returns once it has completed on the device (its stream is
//! synchronized), so tasks submitted after it see its result (their publication comes
//! after the return).
//!
//! NCCL loads its kernels at their first launch, and a module load waits for the
//! context's running kernels (docs/architecture.md, "Pitfalls"): beside a resident
//! persistent kernel a collective would wait for it forever. So every call here runs
//! with the runtime's kernel out (`Shared::with_parked`: it exits once the work
//! submitted so far has completed, and no submission relaunches it until the call
//! returns; other threads' submissions wait meanwhile). A communicator's destroy,
//! which frees pinned memory, waits until no persistent kernel of the process runs
//! (`crate::driver::resident_kernels`). Each rank's collective must be called from a
//! thread of its own: a call returns only once every rank has joined.

use cudarc::nccl::{result as nccl, sys};
use std::sync::Arc;
use std::time::Duration;

use crate::driver::stream::Stream;
use crate::multi::launcher::{LaunchEnv, rendezvous};
use crate::runtime::Shared;
use crate::{Buffer, Element, Error, Result, Runtime};

/// The id all ranks of one communicator share: rank 0 makes it, the others are handed it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct NcclId(pub [u8; 128]);

impl std::fmt::Debug for NcclId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NcclId({}…)", &self.to_hex()[..16])
    }
}

impl NcclId {
    /// A new id (`ncclGetUniqueId`): on rank 0, once per communicator.
    pub fn new() -> Result<Self> {
        nccl_present()?;
        let id = nccl::get_uniqueid().map_err(|e| nccl_err("ncclGetUniqueId", e))?;
        Ok(Self(id.internal.map(|c| c as u8)))
    }

    /// As 256 hex digits, to pass to the other ranks (a file, an environment variable).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// From [`NcclId::to_hex`]'s text.
    pub fn from_hex(s: &str) -> Result<Self> {
        let s = s.trim();
        // Hex digits only: `from_str_radix` alone takes a sign (`+1` would pass).
        if s.len() != 256 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Config("an NCCL id is 256 hex digits".into()));
        }
        let mut id = [0u8; 128];
        for (i, b) in id.iter_mut().enumerate() {
            *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).map_err(|_| Error::Config("an NCCL id is 256 hex digits".into()))?;
        }
        Ok(Self(id))
    }
}

/// A reduction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Sum.
    Sum,
    /// Product.
    Prod,
    /// Maximum.
    Max,
    /// Minimum.
    Min,
    /// Mean (sum divided by the ranks).
    Avg,
}

/// Element types NCCL reduces.
pub trait NcclElement: Element {
    /// Its NCCL type.
    #[doc(hidden)]
    const NCCL: sys::ncclDataType_t;
}
macro_rules! nccl_elem {
    ($($t:ty => $v:ident),*) => { $(impl NcclElement for $t { const NCCL: sys::ncclDataType_t = sys::ncclDataType_t::$v; })* };
}
nccl_elem!(f32 => ncclFloat32, f64 => ncclFloat64, u32 => ncclUint32, i32 => ncclInt32, u64 => ncclUint64, i64 => ncclInt64, u8 => ncclUint8, i8 => ncclInt8);

/// One rank of an NCCL communicator, bound to a CUDA runtime's device.
pub struct Communicator {
    comm: sys::ncclComm_t,
    /// Where its collectives run (a stream of the runtime's context).
    stream: Stream,
    shared: Arc<Shared>,
    rank: usize,
    size: usize,
}

// SAFETY: an NCCL communicator may be used from any thread, one call at a time (calls
// take `&mut self` or are serialized by the runtime's context binding and the stream).
unsafe impl Send for Communicator {}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator").field("rank", &self.rank).field("size", &self.size).finish()
    }
}

impl Communicator {
    /// Rank `rank` of `size` on `rt`'s device, joining the others that use `id`
    /// (`ncclCommInitRank`: returns once every rank has joined). `rt` must run on CUDA.
    pub fn new(rt: &Runtime, id: &NcclId, rank: usize, size: usize) -> Result<Self> {
        if size == 0 || rank >= size || size > i32::MAX as usize {
            return Err(Error::Config(format!("NCCL rank {rank} of {size}")));
        }
        let shared = cuda_runtime(rt)?;
        nccl_present()?;
        let ctx = shared.backend.cuda().expect("checked").context().clone();
        let (comm, stream) = shared.with_parked(|| {
            ctx.bind()?;
            let stream = Stream::non_blocking(&ctx, 0)?;
            let mut comm = std::ptr::null_mut();
            let uid = sys::ncclUniqueId { internal: id.0.map(|b| b as core::ffi::c_char) };
            // SAFETY: `comm` receives the new communicator; the runtime's context is
            // current (NCCL uses the current device's primary context, the runtime's).
            unsafe { nccl::comm_init_rank(&mut comm, size as i32, uid, rank as i32) }.map_err(|e| nccl_err("ncclCommInitRank", e))?;
            Ok((comm, stream))
        })?;
        Ok(Self { comm, stream, shared, rank, size })
    }

    /// One communicator over several runtimes of this process, one per device, in the
    /// order given (rank `i` is `rts[i]`): made from threads of their own, as
    /// `ncclCommInitRank` needs every rank to join at once.
    pub fn for_runtimes(rts: &[&Runtime]) -> Result<Vec<Self>> {
        // Every check that can fail before any rank starts its (blocking) init: a rank
        // that failed after the others began would leave them waiting for it.
        let mut devices = Vec::with_capacity(rts.len());
        for rt in rts {
            cuda_runtime(rt)?;
            if devices.contains(&rt.backend().device) {
                return Err(Error::Config(format!("two runtimes on device {} in one communicator", rt.backend().device)));
            }
            devices.push(rt.backend().device);
        }
        let id = NcclId::new()?;
        let n = rts.len();
        std::thread::scope(|s| {
            let joins: Vec<_> = rts.iter().enumerate().map(|(i, rt)| s.spawn(move || Self::new(rt, &id, i, n))).collect();
            joins.into_iter().map(|j| j.join().unwrap_or_else(|_| Err(Error::Config("an NCCL init thread panicked".into())))).collect()
        })
    }

    /// This process's rank of a job started by a launcher (torchrun, mpirun, srun:
    /// [`LaunchEnv`]), on `rt`'s device. The id comes from `RESIDENT_NCCL_ID` (256 hex
    /// digits) if set, else from rank 0 through a rendezvous at `MASTER_ADDR`, port
    /// `MASTER_PORT + 1` or `RESIDENT_RDZV_PORT` (waiting up to `timeout` for every rank).
    pub fn from_env(rt: &Runtime, timeout: Duration) -> Result<Self> {
        let env = LaunchEnv::from_env()?;
        let id = match std::env::var("RESIDENT_NCCL_ID") {
            Ok(hex) => NcclId::from_hex(&hex)?,
            Err(_) => {
                let master = env
                    .master
                    .clone()
                    .ok_or_else(|| Error::Config("set MASTER_ADDR and MASTER_PORT (rank 0's address), or RESIDENT_NCCL_ID".into()))?;
                NcclId(rendezvous(&master, env.rank, env.size, timeout, || NcclId::new().map(|id| id.0))?)
            }
        };
        Self::new(rt, &id, env.rank, env.size)
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Ranks in the communicator.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Reduces `buf` across the ranks, in place (`ncclAllReduce`), and waits until it is
    /// done. Every rank must call it with a buffer of the same length. `buf` must be
    /// this communicator's runtime's (`ForeignHandle` otherwise).
    pub fn all_reduce<T: NcclElement>(&mut self, buf: &Buffer<T>, op: ReduceOp) -> Result<()> {
        if !std::ptr::addr_eq(Arc::as_ptr(buf.owner()), Arc::as_ptr(&self.shared)) {
            return Err(Error::ForeignHandle("buffer"));
        }
        self.shared.usable()?;
        let p = buf.raw_address() as *mut core::ffi::c_void;
        let op = match op {
            ReduceOp::Sum => sys::ncclRedOp_t::ncclSum,
            ReduceOp::Prod => sys::ncclRedOp_t::ncclProd,
            ReduceOp::Max => sys::ncclRedOp_t::ncclMax,
            ReduceOp::Min => sys::ncclRedOp_t::ncclMin,
            ReduceOp::Avg => sys::ncclRedOp_t::ncclAvg,
        };
        let (comm, stream) = (self.comm, &self.stream);
        self.shared.with_parked(|| {
            self.shared.bind()?;
            // SAFETY: `p` is `buf.len()` live elements of `T` on this device (the borrow
            // keeps the buffer alive until the synchronization below); the stream
            // belongs to this device's context, which is current.
            unsafe { nccl::all_reduce(p, p, buf.len(), T::NCCL, op, comm, stream.raw() as sys::cudaStream_t) }
                .map_err(|e| nccl_err("ncclAllReduce", e))?;
            stream.synchronize()
        })
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        // Its destroy frees pinned memory, which waits for running kernels: once no
        // persistent kernel of the process runs (now, if none does).
        let comm = self.comm as usize;
        let ctx = self.shared.backend.cuda().map(|c| c.context().clone());
        crate::driver::resident_kernels::defer(move || {
            if let Some(ctx) = ctx {
                let _ = ctx.bind();
            }
            // SAFETY: our communicator, destroyed once, after its last collective
            // completed (each call synchronized its stream).
            let _ = unsafe { nccl::comm_destroy(comm as sys::ncclComm_t) };
        });
    }
}

/// The runtime's shared state if it runs on CUDA.
fn cuda_runtime(rt: &Runtime) -> Result<Arc<Shared>> {
    if rt.shared.backend.cuda().is_none() {
        return Err(Error::Config("NCCL needs a runtime on a CUDA device (this one runs on the CPU backend)".into()));
    }
    rt.shared.usable()?;
    Ok(rt.shared.clone())
}

fn nccl_present() -> Result<()> {
    // SAFETY: only tries to open the library.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::Config("libnccl could not be loaded (install NCCL, or put libnccl.so on LD_LIBRARY_PATH)".into()))
    }
}

fn nccl_err(call: &'static str, e: nccl::NcclError) -> Error {
    Error::Driver { call, code: 0, name: format!("{e:?}") }
}
