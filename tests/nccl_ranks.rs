//! NCCL between ranks in processes of their own, as a launcher starts them:
//! each process makes a runtime on its local rank's device and a communicator from its
//! environment (`Communicator::from_env`: rank 0 serves the NCCL id over TCP, the
//! others fetch it), then all-reduces its buffers. This is the path of a job on several
//! hosts, on one host (NCCL's transports between processes; no network between hosts).
//!
//! On a machine with two GPUs, either
//!
//!     <nccl_ranks test binary> --include-ignored
//!
//! (the test starts two copies of this binary as ranks 0 and 1, with torchrun's
//! variables and a free port on 127.0.0.1), or under a real launcher:
//!
//!     torchrun --nproc-per-node 2 --no-python <nccl_ranks test binary> --include-ignored --nocapture
//!
//! A process that finds `RANK` and `WORLD_SIZE` set is a rank; one that does not starts
//! the ranks.

use resident::nccl::{Communicator, ReduceOp};
use resident::{LaunchEnv, Runtime, RuntimeConfig};
use std::process::Command;
use std::time::{Duration, Instant};

/// Ranks started by the test when no launcher started it.
const RANKS: usize = 2;
/// Values per rank.
const N: usize = 3 << 20;

#[test]
#[ignore = "needs two CUDA GPUs"]
fn ranks_from_env() {
    if std::env::var_os("RANK").is_some() && std::env::var_os("WORLD_SIZE").is_some() {
        rank();
    } else {
        start_ranks();
    }
}

/// One rank: inputs of every rank from the shared seed (so each can check the result
/// against an f64 reference), its own into its runtime's buffers, a sum and a max.
fn rank() {
    let env = LaunchEnv::from_env().unwrap();
    let device = env.local_rank.unwrap_or(env.rank);
    let rt = Runtime::with_config(RuntimeConfig { device, capacity: 1 << 14, ..RuntimeConfig::cuda() }).unwrap();
    let started = Instant::now();
    let mut comm = Communicator::from_env(&rt, Duration::from_secs(60)).unwrap();
    let joined = started.elapsed();
    assert_eq!((comm.rank(), comm.size()), (env.rank, env.size));
    let seed = shared_seed();
    let xs: Vec<Vec<f32>> = (0..env.size).map(|r| inputs(seed, r, |v| (v % 2001) as f32 / 1000.0 - 1.0)).collect();
    let us: Vec<Vec<u32>> = (0..env.size).map(|r| inputs(seed ^ 0x9e37_79b9, r, |v| v)).collect();
    let f = rt.buffer_from(&xs[env.rank]).unwrap();
    let u = rt.buffer_from(&us[env.rank]).unwrap();
    comm.all_reduce(&f, ReduceOp::Sum).unwrap();
    comm.all_reduce(&u, ReduceOp::Max).unwrap();
    let got = f.read().unwrap();
    for i in 0..N {
        let want: f64 = xs.iter().map(|x| x[i] as f64).sum();
        assert!((got[i] as f64 - want).abs() <= 1e-6 * want.abs().max(1.0), "rank {}: sum {i}: {} vs {want}", env.rank, got[i]);
    }
    let got = u.read().unwrap();
    assert!((0..N).all(|i| got[i] == us.iter().map(|x| x[i]).max().unwrap()), "rank {}: max", env.rank);
    // The runtime still runs tasks (relaunched after NCCL's calls).
    rt.submit(&[resident::Task::axpy(1.0, f.all(), f.all())]).unwrap().wait().unwrap();
    println!("rank {}/{} ({}, device {device}): joined in {joined:?}; sum and max of {N} values match", env.rank, env.size, env.launcher);
    drop(comm);
    drop((f, u));
    rt.close().unwrap();
}

/// The same seed on every rank: `RESIDENT_TEST_SEED` from the test that started the
/// ranks, else (under a launcher) from the rendezvous address, which every rank shares
/// and the launcher picks afresh.
fn shared_seed() -> u32 {
    if let Some(s) = std::env::var("RESIDENT_TEST_SEED").ok().and_then(|s| s.parse().ok()) {
        return s;
    }
    let addr = format!("{:?}{:?}", std::env::var("MASTER_ADDR"), std::env::var("MASTER_PORT"));
    addr.bytes().fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619)) | 1
}

/// Rank `r`'s `N` inputs: xorshift from `seed` and `r`, mapped by `f`.
fn inputs<T>(seed: u32, r: usize, f: impl Fn(u32) -> T) -> Vec<T> {
    let mut s = (seed ^ (r as u32 + 1).wrapping_mul(0x85eb_ca6b)) | 1;
    (0..N)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            f(s)
        })
        .collect()
}

/// Starts [`RANKS`] copies of this test binary as ranks, with torchrun's variables
/// (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`) and a fresh seed;
/// each must succeed within a minute.
fn start_ranks() {
    let exe = std::env::current_exe().unwrap();
    // A port whose next is free too (rank 0 serves the id at MASTER_PORT + 1).
    let port = (0..100)
        .find_map(|_| {
            let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
            let p = l.local_addr().ok()?.port();
            std::net::TcpListener::bind(("127.0.0.1", p.checked_add(1)?)).ok().map(|_| p)
        })
        .expect("a free port pair on 127.0.0.1");
    let seed = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos() | 1;
    let mut ranks: Vec<_> = (0..RANKS)
        .map(|r| {
            Command::new(&exe)
                .args(["--exact", "ranks_from_env", "--include-ignored", "--nocapture", "--test-threads=1"])
                .env("RANK", r.to_string())
                .env("LOCAL_RANK", r.to_string())
                .env("WORLD_SIZE", RANKS.to_string())
                .env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", port.to_string())
                .env("RESIDENT_TEST_SEED", seed.to_string())
                .spawn()
                .unwrap()
        })
        .collect();
    let start = Instant::now();
    let mut done = vec![None; RANKS];
    while done.iter().any(Option::is_none) {
        for (r, child) in ranks.iter_mut().enumerate() {
            if done[r].is_none() {
                done[r] = child.try_wait().unwrap();
            }
        }
        if start.elapsed() > Duration::from_secs(60) {
            ranks.iter_mut().for_each(|c| drop(c.kill()));
            panic!("ranks hung: {done:?}");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    for (r, status) in done.into_iter().enumerate() {
        assert!(status.unwrap().success(), "rank {r} failed: {status:?}");
    }
}
