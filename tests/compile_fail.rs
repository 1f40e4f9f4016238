//! Misuse the compiler refuses: the borrow rules of `resident::stream`, a ticket
//! dropped unread (`#[must_use]`, denied), a reservation sent to another thread (not
//! `Send`). Each file in tests/compile_fail/ misuses the API and must fail to compile
//! with the error in its `.stderr` twin. Needs no GPU (nothing runs). Regenerate the expected errors after a
//! deliberate change with `TRYBUILD=overwrite cargo test --release --test compile_fail`,
//! and read them.

#[test]
fn stream_borrow_rules() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/compile_fail/*.rs");
}
