//! The Hopper GMMA shared-memory atoms of `corpus/data/atoms/sm90_smem.toml`: their bit layouts
//! recast to 16-bit elements give the hand-derived element layouts, and the recast keeps every
//! bit where it was (element `e` occupies bits `[16e, 16e+16)`).

use layout::cute::recast_swizzled;
use layout::notation::cute::parse_swizzled;
use layout::SwizzledLayout;

const ATOMS: &str = include_str!("../../corpus/data/atoms/sm90_smem.toml");

fn atoms() -> Vec<toml::Table> {
    let table: toml::Table = ATOMS.parse().unwrap();
    table["atom"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_table().unwrap().clone())
        .collect()
}

fn field(atom: &toml::Table, key: &str) -> SwizzledLayout {
    parse_swizzled(atom[key].as_str().unwrap()).unwrap()
}

#[test]
fn sm90_atoms_cover_both_majors_and_all_swizzles() {
    let names: Vec<String> = atoms()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 8);
    for major in ["K", "MN"] {
        for sw in ["INTER", "SW32", "SW64", "SW128"] {
            assert!(names.contains(&format!("Layout_{major}_{sw}_Atom_Bits")));
        }
    }
}

#[test]
fn sm90_atoms_recast_to_16_bit_elements_as_derived() {
    for atom in atoms() {
        let bits = field(&atom, "bits");
        let halves = recast_swizzled(&bits, 1, 16).unwrap();
        assert_eq!(
            halves.to_string(),
            atom["elements16"].as_str().unwrap(),
            "{}",
            atom["name"]
        );
        assert_eq!(recast_swizzled(&halves, 16, 1).unwrap(), bits);
    }
}

/// Element `(r, c)` of the 16-bit layout holds bits `(r, 16c + k)` (K-major; the unit-stride
/// mode is scaled) of the bit layout, at bit offsets `16 * offset + k`.
#[test]
fn sm90_atoms_recast_preserves_every_bit() {
    for atom in atoms() {
        let bits = field(&atom, "bits");
        let halves = field(&atom, "elements16");
        let shape = halves.layout().top_shape();
        let unit = halves
            .layout()
            .flat_modes()
            .iter()
            .position(|&(_, d)| d == 1)
            .unwrap();
        let bit_shape: Vec<i64> = bits.layout().top_shape();
        for c0 in 0..shape[0] {
            for c1 in 0..shape[1] {
                let e = halves.eval(&shape, &[c0, c1]).unwrap();
                for k in 0..16 {
                    let mut bc = [c0, c1];
                    bc[unit] = bc[unit] * 16 + k;
                    assert_eq!(
                        bits.eval(&bit_shape, &bc).unwrap(),
                        16 * e + k,
                        "{}",
                        atom["name"]
                    );
                }
            }
        }
    }
}

/// CUTLASS's text swizzles the BYTE address; ours swizzles the bit offset: the same map.
#[test]
fn sm90_atoms_bit_swizzle_equals_cutlass_byte_address_swizzle() {
    for atom in atoms() {
        let (bits, cutlass) = (field(&atom, "bits"), field(&atom, "cutlass"));
        assert_eq!(bits.layout(), cutlass.layout());
        for i in 0..bits.layout().size() {
            let o = bits.layout().eval_index(i).unwrap();
            let byte = cutlass.swizzle().apply(o / 8).unwrap();
            assert_eq!(
                bits.eval_index(i).unwrap(),
                byte * 8 + o % 8,
                "{}",
                atom["name"]
            );
        }
    }
}

/// pycute's evaluation (`bench/peers/gen_smem_atom_vectors.py`: its Layout and Swizzle on the
/// CUTLASS byte-address form) gives the same 16-bit element offsets as our recast, everywhere.
#[test]
fn sm90_atoms_recast_matches_pycute() {
    let data: serde_json::Value =
        serde_json::from_str(include_str!("../../tests/data/pycute/sm90_smem_atoms.json")).unwrap();
    for atom in atoms() {
        let name = atom["name"].as_str().unwrap();
        let want = &data[name];
        let halves = recast_swizzled(&field(&atom, "bits"), 1, 16).unwrap();
        let shape: Vec<i64> = want["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        assert_eq!(halves.layout().top_shape(), shape, "{name}");
        let offsets = want["offsets"].as_array().unwrap();
        assert_eq!(offsets.len() as i64, halves.layout().size(), "{name}");
        for (i, o) in offsets.iter().enumerate() {
            assert_eq!(
                halves.eval_index(i as i64).unwrap(),
                o.as_i64().unwrap(),
                "{name} at {i}"
            );
        }
    }
}
