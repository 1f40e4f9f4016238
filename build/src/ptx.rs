//! Small edits and reads of PTX text.

/// Inserts `.maxnreg max` into the PTX entry `entry` (before its body), if present and
/// not capped yet. rustc has no way to say it.
pub fn cap_registers(ptx: &str, entry: &str, max: u32) -> String {
    let Some(at) = ptx.find(&format!(".entry {entry}(")) else { return ptx.to_string() };
    let Some(close) = ptx[at..].find(')') else { return ptx.to_string() };
    let Some(open) = ptx[at + close..].find('{') else { return ptx.to_string() };
    let body = at + close + open;
    if ptx[at..body].contains(".maxnreg") {
        return ptx.to_string();
    }
    format!("{}.maxnreg {max}\n{}", &ptx[..body], &ptx[body..])
}

/// The names of the PTX's kernels (`.entry NAME(`).
pub fn entries(ptx: &str) -> impl Iterator<Item = &str> {
    ptx.match_indices(".entry ").filter_map(|(at, m)| {
        let rest = &ptx[at + m.len()..];
        rest.find('(').map(|end| rest[..end].trim())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_the_named_entry_once() {
        let ptx = ".visible .entry a(\n.param .u64 p)\n{ ret; }\n.visible .entry a_b(\n)\n{}";
        let capped = cap_registers(ptx, "a", 80);
        assert_eq!(capped, ".visible .entry a(\n.param .u64 p)\n.maxnreg 80\n{ ret; }\n.visible .entry a_b(\n)\n{}");
        assert_eq!(cap_registers(&capped, "a", 64), capped);
        assert_eq!(cap_registers(ptx, "missing", 80), ptx);
    }

    #[test]
    fn entry_names_are_found() {
        let ptx = ".visible .entry a_b(\n.param .u64 p)\n{ ret; }\n.func (.reg .b32 r) helper(\n)\n.visible .entry c1()\n{}";
        assert_eq!(entries(ptx).collect::<Vec<_>>(), ["a_b", "c1"]);
    }
}
