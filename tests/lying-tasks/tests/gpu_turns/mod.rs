//! How the GPU test binaries take turns: one runtime's persistent kernel fills the GPU,
//! so every GPU test holds `GPU` while it runs, and is ignored without `--include-ignored`
//! (CI has no GPU). Included with `#[macro_use] mod gpu_turns;`.

/// Held by the running GPU test (a poisoned lock is taken over: one failed test must
/// not fail the rest).
pub static GPU: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// `gpu_test!(name, body)`: a test that needs a CUDA GPU, run in turn.
macro_rules! gpu_test {
    ($name:ident, $body:expr) => {
        #[test]
        #[ignore = "needs a CUDA GPU"]
        fn $name() {
            let _turn = crate::gpu_turns::GPU.lock().unwrap_or_else(|e| e.into_inner());
            $body
        }
    };
}
