//! Buffers of any `Pod` element type, and tables far past the old cap of 4096 buffers and
//! counters: scenarios shared by `tests/cpu.rs` and `tests/gpu.rs`.

use bytemuck::{Pod, Zeroable};
use rand::Rng;
use resident::{Element, Error, Rejection, Runtime, Slice, Task};

/// A user's element type: a kind byte of the user range tells it from other 16-byte types.
#[derive(Clone, Copy, Debug, PartialEq, Pod, Zeroable)]
#[repr(C)]
pub struct Particle {
    pub pos: [f32; 3],
    pub mass: f32,
}

impl Element for Particle {
    const KIND: u8 = 0x80;
}

/// Buffers of user and primitive types round-trip, and a slice of one type cannot be
/// resolved in a buffer of another (same size or not).
pub fn any_pod_elements(rt: &Runtime) {
    let mut rng = rand::rng();
    let ps: Vec<Particle> = (0..1001).map(|_| Particle { pos: [rng.random(), rng.random(), rng.random()], mass: rng.random() }).collect();
    let b = rt.buffer_from(&ps).unwrap();
    assert_eq!(b.read().unwrap(), ps);
    let part = b.slice(10..20);
    assert_eq!((part.offset, part.len), (10, 10));
    let f64s: Vec<f64> = (0..777).map(|_| rng.random()).collect();
    assert_eq!(rt.buffer_from(&f64s).unwrap().read().unwrap(), f64s);
    let bytes: Vec<u8> = (0..333).map(|_| rng.random()).collect();
    assert_eq!(rt.buffer_from(&bytes).unwrap().read().unwrap(), bytes);
    let i64s: Vec<i64> = (0..5).map(|_| rng.random()).collect();
    assert_eq!(rt.buffer_from(&i64s).unwrap().read().unwrap(), i64s);
    // The particles named as f32s (forged: the types forbid it): refused on the host.
    let y = rt.buffer::<f32>(4).unwrap();
    let forged: Slice<f32> = Slice::new(b.handle(), 0, 4);
    assert!(matches!(
        rt.submit(&[Task::axpy(1.0, forged, y.all())]),
        Err(Error::InvalidTask { reason: Rejection::BadBuffer { arg: 0, .. }, .. })
    ));
    // A u32 buffer named as f32 (same size, another kind): refused too.
    let u = rt.buffer::<u32>(4).unwrap();
    assert!(matches!(
        rt.submit(&[Task::axpy(1.0, Slice::new(u.handle(), 0, 4), y.all())]),
        Err(Error::InvalidTask { reason: Rejection::BadBuffer { arg: 0, .. }, .. })
    ));
}

/// `n` buffers and `n` counters alive at once (past the old cap of 4096), the last ones
/// used by tasks that mark them and signal them.
pub fn many_buffers_and_counters(rt: &Runtime, n: usize) {
    let bufs: Vec<_> = (0..n).map(|_| rt.buffer::<u32>(1).unwrap()).collect();
    let counters: Vec<_> = (0..n).map(|_| rt.counter().unwrap()).collect();
    let tasks: Vec<Task> = (n - 100..n).map(|i| Task::mark(bufs[i].all(), 0).signals(counters[i].id())).collect();
    rt.submit(&tasks).unwrap().wait().unwrap();
    for i in n - 100..n {
        assert_eq!(bufs[i].read().unwrap(), vec![1]);
        assert_eq!(counters[i].value().unwrap(), 1);
    }
    assert_eq!(bufs[0].read().unwrap(), vec![0]);
}
