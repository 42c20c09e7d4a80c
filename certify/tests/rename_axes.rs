//! `--axes` renaming refuses a target that would add coordinates onto an axis the layout
//! keeps: the same axis, an alias of it, or an axis related to it through the registry.

use certify::claim::rename_axes;
use layout::{Axis, Layout};

fn rename(text: &str, from: &str, to: &str) -> Result<Layout, String> {
    let l = Layout::parse(text, None).unwrap();
    rename_axes(&l, &[(Axis::new(from).unwrap(), Axis::new(to).unwrap())])
        .map_err(|e| e.to_string())
}

#[test]
fn renaming_onto_an_alias_of_a_kept_axis_is_refused_naming_both() {
    let e = rename("S[(4,32):(1@foo,1@laneid)]", "foo", "lane").unwrap_err();
    assert!(
        e.contains("foo") && e.contains("lane") && e.contains("laneid"),
        "{e}"
    );
}

#[test]
fn renaming_onto_an_axis_related_to_a_kept_axis_is_refused_naming_both() {
    // tx = laneid + 32*warpid: foo's coordinates would be added onto laneid.
    let e = rename("S[(4,32):(1@foo,1@laneid)]", "foo", "tx").unwrap_err();
    assert!(e.contains("tx") && e.contains("laneid"), "{e}");
    // And the other way round: the layout keeps tx, the target is one of its terms.
    let e = rename("S[(4,32):(1@foo,1@tx)]", "foo", "warpid").unwrap_err();
    assert!(e.contains("warpid") && e.contains("tx"), "{e}");
    // Transitively: warpid = wwid + 4*wgid.
    assert!(rename("S[(4,32):(1@foo,1@tx)]", "foo", "wgid").is_err());
}

#[test]
fn renaming_onto_an_independent_axis_is_allowed() {
    // laneid and warpid are both terms of tx, but neither is derived from the other.
    let r = rename("S[(4,32):(1@foo,1@laneid)]", "foo", "warpid").unwrap();
    assert_eq!(r.print(), "S[(4,32):(1@warpid,1@laneid)]");
    let r = rename("S[(4,8):(1@lane_id,4@lane_id)]", "lane_id", "laneid").unwrap();
    assert_eq!(r.print(), "S[(4,8):(1@laneid,4@laneid)]");
}
