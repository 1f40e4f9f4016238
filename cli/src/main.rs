//! `resident info`: the devices, the driver, the backend a runtime picks here and why.
//! `resident doctor`: that, and what stands in the way: the toolchain's missing
//! components (with the command that adds them), and the built-in kernel image as the
//! driver sees it (registers, local memory, blocks per SM).
//!
//!     cargo run --release -p resident-cli -- doctor

mod image;
mod machine;
mod toolchain;

use clap::{Parser, Subcommand};

/// A line to stdout; a closed stdout (`resident info | head`) ends the program quietly,
/// where `println!` would panic.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    }};
}
pub(crate) use out;

/// What this machine offers resident, and what stands in its way.
#[derive(Parser)]
#[command(name = "resident")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// The devices, the driver, and the backend a runtime picks here (and why).
    Info,
    /// `info`, the toolchain's state, and the built-in kernel image's registers,
    /// local memory and blocks per SM. Exit status 1 if something needs fixing.
    Doctor,
}

fn main() {
    let args = Args::parse();
    let mut problems = machine::report();
    if matches!(args.command, Command::Doctor) {
        problems += toolchain::report();
        problems += image::report();
        out!();
        match problems {
            0 => out!("doctor: nothing to fix"),
            n => out!("doctor: {n} thing(s) to fix, each with its fix above"),
        }
    }
    std::process::exit(i32::from(problems > 0 && matches!(args.command, Command::Doctor)));
}
