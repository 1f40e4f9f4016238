// A ticket is how a caller learns whether its batch ran: dropping one unread is a
// warning (`#[must_use]`), an error where the caller denies it.
#![deny(unused_must_use)]

fn main() -> resident::Result<()> {
    let rt = resident::Runtime::with_config(resident::RuntimeConfig::cpu())?;
    rt.submit(&[resident::Task::noop(1)])?;
    Ok(())
}
