//! The runtime's SM partition as a user sees it (`RuntimeConfig::sm_partition`; the
//! green contexts behind it: host/driver/green.rs).

/// How a runtime split its device ([`Sharing::partition`](crate::Sharing::partition)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SmPartition {
    /// The SMs the runtime's kernels run on (the request, rounded up by the driver).
    pub sms: u32,
    /// The SMs left to the rest ([`Sharing::rest_stream`](crate::Sharing::rest_stream)); 0 when fewer remain than
    /// the driver's smallest partition (then there is no rest stream).
    pub rest_sms: u32,
    /// The device's SMs.
    pub device_sms: u32,
}
