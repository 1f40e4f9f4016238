//! Property: the host's check (`submit`) and the device's check (`submit_unchecked`,
//! the same device code the GPU runs, here on the CPU backend) agree on arbitrary
//! tasks: the host accepts a task exactly when the device runs it successfully. Tasks
//! are drawn over live, stale and forged buffer handles, edge offsets and lengths, and
//! arbitrary opcodes.

use proptest::prelude::*;
use resident::{BufSlice, BufferHandle, Error, Runtime, RuntimeConfig, Task};
use std::sync::OnceLock;

struct Fixture {
    rt: Runtime,
    x: resident::Buffer<f32>,
    y: resident::Buffer<f32>,
    c: resident::Buffer<u32>,
    stale: BufferHandle,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let rt = Runtime::with_config(RuntimeConfig { cpu_workers: 2, capacity: 256, ..RuntimeConfig::cpu() }).unwrap();
        let x = rt.buffer_from(&[1.0f32; 64]).unwrap();
        let y = rt.buffer_from(&[1.0f32; 64]).unwrap();
        let c = rt.buffer_from(&[0u32; 8]).unwrap();
        let gone = rt.buffer::<f32>(16).unwrap();
        let stale = gone.handle();
        drop(gone);
        Fixture { rt, x, y, c, stale }
    })
}

fn handle() -> impl Strategy<Value = u32> {
    prop_oneof![Just(0u32), Just(1), Just(2), Just(3), any::<u32>()]
}

fn extent() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..80, Just(u32::MAX), Just(u32::MAX - 7), any::<u32>()]
}

fn slice_of(f: &Fixture, which: u32, offset: u32, len: u32) -> BufSlice {
    let handle = match which {
        0 => f.x.handle(),
        1 => f.y.handle(),
        2 => f.c.handle(),
        3 => f.stale,
        h => BufferHandle(h),
    };
    BufSlice { handle, offset, len }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn host_and_device_checks_agree(
        op in prop_oneof![Just(1u16), Just(2), Just(3), Just(4), any::<u16>().prop_filter("not the sentinel", |o| *o != 0xffff)],
        (h1, o1, l1) in (handle(), extent(), extent()),
        (h2, o2, l2) in (handle(), extent(), extent()),
        index in prop_oneof![0u32..10, any::<u32>()],
        tag in any::<u64>(),
    ) {
        let f = fixture();
        let (a, b) = (slice_of(f, h1, o1, l1), slice_of(f, h2, o2, l2));
        let task = match op {
            1 => Task::noop(tag),
            2 => Task::axpy(0.5, a, BufSlice { len: if tag % 2 == 0 { a.len } else { b.len }, ..b }),
            3 => Task::spin(tag % 1000),
            4 => Task::mark(a, index),
            raw => Task::raw(raw, [h1, o1, l1, h2, o2, l2, index, 0, 0, 0, 0, 0]),
        };
        let host = f.rt.submit(&[task]).map(|t| t.wait());
        // SAFETY: the point of the test: the device check alone must hold the line.
        let device = unsafe { f.rt.submit_unchecked(&[task]) }.unwrap().wait();
        match (&host, &device) {
            (Ok(Ok(())), Ok(())) => {}
            (Err(Error::InvalidTask { .. }), Err(Error::TaskFailed { .. })) => {}
            _ => prop_assert!(false, "host {host:?} but device {device:?} for {task:?}"),
        }
    }
}
