//! The multi-GPU example's job on two CPU runtimes standing in for devices (CI), and on
//! two GPUs (ignored-marked; run with `--include-ignored` on a machine with two).

use multi_gpu::{Path, runtime, two_stage};
use resident::BackendKind;

#[test]
fn two_stage_on_two_cpu_devices() {
    let (a, b) = (runtime(0, BackendKind::Cpu).unwrap(), runtime(1, BackendKind::Cpu).unwrap());
    let o = two_stage(&a, &b, (1 << 18) + 1234, 3, Path::Host).unwrap();
    assert!(o.exact, "{o:?}");
    // No peer path between CPU runtimes: the same job through the host.
    let o = two_stage(&a, &b, (1 << 18) + 1234, 3, Path::PeerIfPossible).unwrap();
    assert!(o.exact && !o.peer, "{o:?}");
}

#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_stage_on_two_gpus() {
    let (a, b) = (runtime(0, BackendKind::Cuda).unwrap(), runtime(1, BackendKind::Cuda).unwrap());
    let o = two_stage(&a, &b, 1 << 24, 5, Path::Host).unwrap();
    assert!(o.exact && !o.peer, "{o:?}");
    eprintln!("two GPUs, through the host: {o:?}");
    let o = two_stage(&a, &b, 1 << 24, 5, Path::PeerIfPossible).unwrap();
    assert!(o.exact && o.peer, "{o:?}");
    eprintln!("two GPUs, peer to peer: {o:?}");
}
