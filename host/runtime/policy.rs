//! Residency policies: when a runtime's resident kernel gives the GPU back (the
//! mechanism is `crate::runtime::residency`), and what it has done so far.

use std::time::Duration;

/// When a runtime's resident kernel gives the GPU back (`RuntimeConfig::residency`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Residency {
    /// The default. On a GPU: [`Residency::IdleExit`] after
    /// [`Residency::DEFAULT_IDLE`] while the kernel has the GPU to itself, and
    /// [`Residency::WhenDrained`] while another context (another process, without MPS)
    /// time-slices with it: the relay warp sees the slices other contexts take as gaps
    /// in its polls (`RelayMailbox::slices`), and for [`Residency::CONTENDED_HOLD`]
    /// after the last one seen, the kernel leaves as soon as the queue drains. A
    /// resident kernel there would cost the other context half its time even while it
    /// waits, and its own latency is a time slice whenever the other has the GPU.
    /// [`Residency::Always`] on the CPU backend, whose idle workers only sleep.
    #[default]
    Auto,
    /// Resident from start to shutdown: the lowest latency, and the GPU is never given
    /// back (other work on it runs beside a kernel that holds a share of every SM, and
    /// other processes time-slice with it even while it waits).
    Always,
    /// The kernel exits once nothing has been submitted and everything has completed for
    /// this long; the next submission relaunches it.
    IdleExit(Duration),
    /// The kernel exits as soon as everything submitted has completed (checked every
    /// 50 µs); each batch after a pause pays a relaunch.
    WhenDrained,
}

impl Residency {
    /// The default idle time on a GPU. An idle runtime that exits after it costs a
    /// neighbour's GEMM nothing measurable (710 against 710 TFLOP/s alone, where a
    /// resident one took half: H100, 2026-11-25, docs/sharing.md), and a relaunch
    /// costs about 18 µs, under 0.2% of the idle time it follows.
    pub const DEFAULT_IDLE: Duration = Duration::from_millis(10);

    /// How long [`Residency::Auto`] behaves as [`Residency::WhenDrained`] after the
    /// relay last saw another context take a time slice. A runtime that exits between
    /// bursts sees slices only while it runs; after this long without one it stays
    /// resident for [`Residency::DEFAULT_IDLE`] again, and if the other context is
    /// still there, sees a slice within that time.
    pub const CONTENDED_HOLD: Duration = Duration::from_secs(1);

    /// The notifier's period for the draining checks ([`Residency::WhenDrained`], and
    /// `Auto` while contended).
    pub(crate) const DRAIN_CHECK: Duration = Duration::from_micros(50);

    /// `Auto` made concrete for a backend.
    pub(crate) fn resolve(self, kind: crate::backend::kind::BackendKind) -> Self {
        match (self, kind) {
            // On a GPU `Auto` stays itself: its idle time depends on what the relay sees.
            (Residency::Auto, k) if k != crate::backend::kind::BackendKind::Cuda => Residency::Always,
            (r, _) => r,
        }
    }

    /// How often the notifier thread looks for idleness; `None` for `Always`. For a
    /// resolved `Auto` (a GPU's), the period while not contended; the notifier's idle
    /// turn shortens it to [`Residency::DRAIN_CHECK`] while contended.
    pub(crate) fn period(self) -> Option<Duration> {
        match self {
            Residency::Always => None,
            Residency::Auto => Residency::IdleExit(Self::DEFAULT_IDLE).period(),
            Residency::IdleExit(d) => Some((d / 4).clamp(Self::DRAIN_CHECK, Duration::from_millis(10))),
            Residency::WhenDrained => Some(Self::DRAIN_CHECK),
        }
    }

    /// How long the runtime must have been idle before its kernel exits; `contended`:
    /// another context took a time slice within [`Residency::CONTENDED_HOLD`].
    pub(crate) fn idle_time(self, contended: bool) -> Option<Duration> {
        match self {
            Residency::Always => None,
            Residency::Auto if contended => Some(Duration::ZERO),
            Residency::Auto => Some(Self::DEFAULT_IDLE),
            Residency::IdleExit(d) => Some(d),
            Residency::WhenDrained => Some(Duration::ZERO),
        }
    }
}

/// What elastic residency has done so far ([`crate::Runtime::metrics`], `residency`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResidencyStats {
    /// Whether the resident kernel runs now (false already while an exit is under way;
    /// `exits` counts it once it is complete).
    pub resident: bool,
    /// Idle exits so far.
    pub exits: u64,
    /// Relaunches so far.
    pub relaunches: u64,
    /// Time slices other contexts took from the resident kernel, as its relay warp saw
    /// them (gaps of more than 500 µs in its polling; zero without a relay, and on
    /// the CPU backend): another process uses the GPU without MPS.
    pub slices_taken: u64,
    /// The last such gap.
    pub last_slice: Duration,
    /// Whether [`Residency::Auto`] now lets the kernel go as soon as the queue drains
    /// (a slice was seen within [`Residency::CONTENDED_HOLD`]).
    pub contended: bool,
}
