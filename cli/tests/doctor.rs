//! The `resident` command on this machine: `info` and `doctor` run, report a backend,
//! and `doctor` finds nothing to fix where the toolchain is complete (CI installs it).

use std::process::Command;

fn resident(arg: &str) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_resident")).arg(arg).output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn info_names_the_backend() {
    let (ok, out) = resident("info");
    assert!(ok, "{out}");
    assert!(out.contains("backend") && (out.contains("CPU backend") || out.contains("CUDA backend")), "{out}");
}

#[test]
fn doctor_checks_toolchain_and_image() {
    let (ok, out) = resident("doctor");
    assert!(out.contains("toolchain") && out.contains("kernel image `resident`"), "{out}");
    assert_eq!(ok, out.contains("doctor: nothing to fix"), "{out}");
}

#[test]
fn unknown_commands_are_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_resident")).arg("fix-everything").output().unwrap();
    assert!(!out.status.success());
}
