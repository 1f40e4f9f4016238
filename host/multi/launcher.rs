//! What a job launcher tells each process (its rank, the job's size, where rank 0 is),
//! and the rendezvous that hands every rank the one NCCL id that rank 0 made
//! (`crate::multi::nccl::Communicator::from_env`). No network layer of our own beyond this: a
//! TCP connection per rank, once, at start-up, as torchrun's store does.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::{Error, Result};

/// One process's place in a job, from its launcher's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchEnv {
    /// This process's rank, from 0.
    pub rank: usize,
    /// Processes in the job.
    pub size: usize,
    /// The rank on this host (which device it takes by default), if the launcher says.
    pub local_rank: Option<usize>,
    /// Where rank 0 serves the NCCL id: `MASTER_ADDR`, port `RESIDENT_RDZV_PORT`, else
    /// `MASTER_PORT + 1` (torchrun's own store listens at `MASTER_PORT`), if set.
    pub master: Option<String>,
    /// Which launcher's variables these were: "torchrun", "mpirun" (Open MPI), "pmi"
    /// (MPICH, Intel MPI), "srun" (Slurm).
    pub launcher: &'static str,
}

impl LaunchEnv {
    /// From the process's environment (see [`LaunchEnv::from_vars`]).
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// From variables looked up by `get`: torchrun's `RANK`, `WORLD_SIZE`,
    /// `LOCAL_RANK`; Open MPI's `OMPI_COMM_WORLD_RANK`, `_SIZE`, `_LOCAL_RANK`; PMI's
    /// `PMI_RANK`, `PMI_SIZE`, `MPI_LOCALRANKID`; Slurm's `SLURM_PROCID`, `SLURM_NTASKS`,
    /// `SLURM_LOCALID`; the first launcher whose rank and size are both set wins.
    /// `MASTER_ADDR` and `MASTER_PORT` (torchrun sets them; set them yourself under
    /// mpirun or srun) say where rank 0 serves the id: at port `MASTER_PORT + 1`, or
    /// `RESIDENT_RDZV_PORT`. A rank outside the size, or a
    /// value that is not a number, is `Error::Config`.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Self> {
        const KINDS: [(&str, &str, &str, &str); 4] = [
            ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
            ("mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
            ("pmi", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
            ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
        ];
        // Decimal digits only (`parse` alone takes a leading `+`), within a `usize`.
        let num = |k: &str| -> Result<Option<usize>> {
            get(k)
                .map(|v| {
                    let t = v.trim();
                    match t.parse::<usize>() {
                        Ok(n) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => Ok(n),
                        _ => Err(Error::Config(format!("{k}={v:?} is not a number"))),
                    }
                })
                .transpose()
        };
        for (launcher, r, s, l) in KINDS {
            if let (Some(rank), Some(size)) = (num(r)?, num(s)?) {
                if size == 0 || rank >= size {
                    return Err(Error::Config(format!("{r}={rank} is not a rank of {s}={size}")));
                }
                // torchrun's own store listens at MASTER_PORT: the rendezvous takes the
                // next port, unless RESIDENT_RDZV_PORT names one.
                let port = match (num("RESIDENT_RDZV_PORT")?, num("MASTER_PORT")?) {
                    (Some(p), _) => Some(p),
                    // Saturating: a MASTER_PORT near `usize::MAX` is refused below, not
                    // wrapped (or a panic in a debug build).
                    (None, Some(p)) => Some(p.saturating_add(1)),
                    _ => None,
                };
                if port.is_some_and(|p| p == 0 || p > u16::MAX as usize) {
                    return Err(Error::Config(format!("rendezvous port {} is not a TCP port", port.unwrap_or(0))));
                }
                let master = match (get("MASTER_ADDR"), port) {
                    // An IPv6 address goes in brackets before its port.
                    (Some(a), Some(p)) if a.contains(':') && !a.starts_with('[') => Some(format!("[{a}]:{p}")),
                    (Some(a), Some(p)) => Some(format!("{a}:{p}")),
                    _ => None,
                };
                return Ok(Self { rank, size, local_rank: num(l)?, master, launcher });
            }
        }
        Err(Error::Config("no launcher environment: set RANK and WORLD_SIZE (torchrun), or run under mpirun or srun".into()))
    }
}

/// Hands every rank rank 0's `id`: rank 0 listens at `addr` and sends the 128 bytes to
/// each of the `size - 1` others, which connect (retrying until `timeout`) and say
/// their rank first. Rank 0 counts each rank once and ignores connections that do not
/// say a rank of the job (a port scanner, a stray process); a connection that fails
/// fails alone. Returns the id every rank then holds.
pub fn rendezvous(
    addr: &str,
    rank: usize,
    size: usize,
    timeout: Duration,
    make_id: impl FnOnce() -> Result<[u8; 128]>,
) -> Result<[u8; 128]> {
    if size == 0 || rank >= size {
        return Err(Error::Config(format!("rendezvous: rank {rank} of {size}")));
    }
    let deadline = crate::util::deadline::after(timeout);
    let passed = || crate::util::deadline::passed(deadline);
    let io = |what: &str, e: std::io::Error| Error::Config(format!("rendezvous at {addr}: {what}: {e}"));
    if rank == 0 {
        let id = make_id()?;
        let listener = TcpListener::bind(addr).map_err(|e| io("bind", e))?;
        listener.set_nonblocking(true).map_err(|e| io("listen", e))?;
        let mut served = vec![false; size];
        served[0] = true;
        while served.iter().any(|s| !s) {
            match listener.accept() {
                Ok((mut s, _)) => {
                    // One connection's trouble is its own: a short read limit, then
                    // the rank it says, then the id.
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
                    let mut r = [0u8; 8];
                    if s.read_exact(&mut r).is_err() {
                        continue;
                    }
                    let r = u64::from_le_bytes(r);
                    if r == 0 || r >= size as u64 || served[r as usize] {
                        continue;
                    }
                    if s.write_all(&id).is_ok() {
                        served[r as usize] = true;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if passed() {
                        let n = served.iter().filter(|s| !**s).count();
                        return Err(Error::Config(format!(
                            "rendezvous at {addr}: {n} of {} ranks did not come before the timeout",
                            size - 1
                        )));
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => return Err(io("accept", e)),
            }
        }
        return Ok(id);
    }
    loop {
        let targets: Vec<_> = addr.to_socket_addrs().map_err(|e| io("resolve", e))?.collect();
        if targets.is_empty() {
            return Err(Error::Config(format!("rendezvous: {addr} resolves to nothing")));
        }
        let mut last = None;
        for target in &targets {
            match TcpStream::connect_timeout(target, Duration::from_millis(500)) {
                Ok(mut s) => {
                    let left =
                        deadline.map(|d| d.saturating_duration_since(std::time::Instant::now())).unwrap_or(Duration::from_secs(3600));
                    s.set_read_timeout(Some(left.max(Duration::from_millis(1)))).map_err(|e| io("connect", e))?;
                    s.write_all(&(rank as u64).to_le_bytes()).map_err(|e| io("send rank", e))?;
                    let mut id = [0u8; 128];
                    s.read_exact(&mut id).map_err(|e| io("receive", e))?;
                    return Ok(id);
                }
                Err(e) => last = Some(e),
            }
        }
        if passed() {
            return Err(io("connect", last.unwrap_or_else(|| std::io::Error::other("no address"))));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
