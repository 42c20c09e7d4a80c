//! The program as a petgraph DAG, and its split at shared memory into components (paper
//! algorithm 1, step 1).
//!
//! Nodes are tensors; an operation adds an edge from each input to its output. A component is
//! a connected set of register tensors joined by operations that stay in registers; global
//! tensors join the component of the register tensor they are copied to or from (a copy from
//! global memory fixes the register layout through its own layout), while a shared tensor
//! separates components: its layout is solved afterwards, from every copy that touches it.
//! Each component is synthesized from its own anchor.

use petgraph::algo::{connected_components, toposort};
use petgraph::graph::{DiGraph, NodeIndex, UnGraph};
use petgraph::unionfind::UnionFind;

use super::program::{Program, Scope, SynthError};

/// The program's dataflow graph.
#[derive(Debug)]
pub struct Dag {
    /// Tensor -> tensor edges, labeled with the operation's index.
    pub graph: DiGraph<usize, usize>,
    /// Node of each tensor.
    pub nodes: Vec<NodeIndex>,
}

impl Dag {
    /// The graph of `p`; refuses a cycle (an operation that reads what a later one writes back
    /// into its own input chain), naming a tensor on it.
    pub fn new(p: &Program) -> Result<Dag, SynthError> {
        let mut graph = DiGraph::new();
        let nodes: Vec<NodeIndex> = (0..p.tensors.len()).map(|i| graph.add_node(i)).collect();
        for (k, op) in p.ops.iter().enumerate() {
            for &i in &op.inputs {
                if i != op.output {
                    graph.add_edge(nodes[i], nodes[op.output], k);
                }
            }
        }
        toposort(&graph, None).map_err(|c| SynthError::Program {
            line: p.tensors[graph[c.node_id()]].line,
            op: "program".into(),
            why: format!(
                "the operations form a cycle through {}",
                p.tensors[graph[c.node_id()]].name
            ),
        })?;
        Ok(Dag { graph, nodes })
    }

    /// Component id of every tensor: register tensors joined through register-only operations
    /// and copies with global memory; each shared tensor is alone.
    pub fn components(&self, p: &Program) -> (Vec<usize>, usize) {
        let mut uf = UnionFind::<usize>::new(p.tensors.len());
        let mut und = UnGraph::<(), ()>::new_undirected();
        for _ in &p.tensors {
            und.add_node(());
        }
        for op in &p.ops {
            for &i in &op.inputs {
                let shared = p.tensors[i].scope == Scope::Shared
                    || p.tensors[op.output].scope == Scope::Shared;
                if !shared {
                    uf.union(i, op.output);
                    und.add_edge(NodeIndex::new(i), NodeIndex::new(op.output), ());
                }
            }
        }
        let labels = uf.into_labeling();
        // Renumber by first appearance so ids are deterministic and dense.
        let mut ids = vec![usize::MAX; p.tensors.len()];
        let mut next = 0;
        let mut map = std::collections::BTreeMap::new();
        for (i, &l) in labels.iter().enumerate() {
            let id = *map.entry(l).or_insert_with(|| {
                next += 1;
                next - 1
            });
            ids[i] = id;
        }
        debug_assert_eq!(connected_components(&und), next);
        (ids, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_tensors_split_components() {
        let p = Program::parse(
            "threads 32\ng = global_view(f16, [16, 16], (16,16):(16,1))\n\
             s = shared_tensor(f16, [16, 16])\nr = register_tensor(f16, [16, 16])\n\
             copy(g, s)\ncopy(s, r)\ny = cast(r, f32)\n",
        )
        .unwrap();
        let dag = Dag::new(&p).unwrap();
        let (ids, n) = dag.components(&p);
        assert_eq!(n, 3); // {g}, {s}, {r, y}
        assert_eq!(ids[2], ids[3]);
        assert_ne!(ids[0], ids[2]);
    }
}
