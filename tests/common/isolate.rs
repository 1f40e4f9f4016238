//! A scenario in a child process, under a time limit: a crash (a signal, an abort) or a
//! hang fails the test that runs it, instead of taking the test binary down with it or
//! hanging CI. The child is this test binary again, running that one test with
//! [`CHILD`] set to its name; the parent waits at most `limit`, kills it past that, and
//! requires it to exit with success.

use std::process::Command;
use std::time::{Duration, Instant};

/// Set (to the test's name) in the child process that runs the scenario.
pub const CHILD: &str = "RESIDENT_ISOLATED_TEST";

/// Runs `scenario` in a child process (test `name` of this binary, which must be the
/// test calling this), killed past `limit`; in that child, runs `scenario` itself.
pub fn isolated(name: &str, limit: Duration, scenario: impl FnOnce()) {
    if is_child(name) {
        scenario();
        return;
    }
    run_child(name, limit);
}

/// Whether this process is the child that runs test `name`'s scenario.
pub fn is_child(name: &str) -> bool {
    std::env::var(CHILD).is_ok_and(|n| n == name)
}

/// The parent's half of [`isolated`]: runs test `name` of this binary in a child
/// process (which must then see [`is_child`]), kills it past `limit`, and requires it
/// to exit with success.
pub fn run_child(name: &str, limit: Duration) {
    let exe = std::env::current_exe().expect("the test binary");
    let start = Instant::now();
    let mut child = Command::new(exe)
        .args(["--exact", name, "--include-ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD, name)
        .spawn()
        .expect("a child process");
    loop {
        if let Some(status) = child.try_wait().expect("the child's status") {
            assert!(status.success(), "{name}: the child process failed or crashed ({status}) after {:?}", start.elapsed());
            return;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{name}: hung (killed after {limit:?})");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A test that runs `$body` (an expression of type `()`) in a child process under
/// `$limit`: `isolated_test!(name, limit, body)`.
#[macro_export]
macro_rules! isolated_test {
    ($(#[$m:meta])* $name:ident, $limit:expr, $body:expr) => {
        $(#[$m])*
        #[test]
        fn $name() {
            common::isolate::isolated(stringify!($name), $limit, || $body);
        }
    };
}
