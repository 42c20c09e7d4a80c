//! A redistribution plan as data: steps over the ranks' local buffers, with the collective
//! semantics of spec/distributed.md section 3. Every rank's buffer is an N-D array (row-major);
//! a collective's group members must hold buffers of one shape.

use layout::mesh::ReduceOp;
use serde::{Deserialize, Serialize};

/// One message of a [`Step::SendRecv`]: the box `[src_start, src_start+len)` of `src`'s buffer
/// lands at `dst_start` of `dst`'s new buffer (`src == dst` is a local copy).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    /// Sending rank.
    pub src: i64,
    /// Receiving rank.
    pub dst: i64,
    /// Corner of the box in the sender's buffer.
    pub src_start: Vec<i64>,
    /// Corner in the receiver's new buffer.
    pub dst_start: Vec<i64>,
    /// Box extents.
    pub len: Vec<i64>,
}

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Step {
    /// Each member gets the concatenation of all members' buffers along `dim`, in group order.
    AllGather {
        /// Groups of ranks (member order matters).
        groups: Vec<Vec<i64>>,
        /// Buffer dim to concatenate along.
        dim: usize,
    },
    /// Elementwise reduction over the group; member `i` keeps piece `i` along `dim`.
    ReduceScatter {
        /// Groups of ranks.
        groups: Vec<Vec<i64>>,
        /// Buffer dim cut into group-size pieces.
        dim: usize,
        /// Reduction.
        op: ReduceOp,
    },
    /// Elementwise reduction over the group; every member gets it.
    AllReduce {
        /// Groups of ranks.
        groups: Vec<Vec<i64>>,
        /// Reduction.
        op: ReduceOp,
    },
    /// Piece `j` (along `split_dim`) of member `i` goes to member `j`, which concatenates what it
    /// receives along `concat_dim` in member order.
    AllToAll {
        /// Groups of ranks.
        groups: Vec<Vec<i64>>,
        /// Dim cut into group-size pieces.
        split_dim: usize,
        /// Dim the received pieces are concatenated along.
        concat_dim: usize,
    },
    /// Every member gets member `root`'s buffer.
    Broadcast {
        /// Groups of ranks.
        groups: Vec<Vec<i64>>,
        /// Index of the root inside each group.
        root: usize,
    },
    /// Point-to-point messages; every rank gets a new buffer of `shape` (padding where no
    /// message lands).
    SendRecv {
        /// New buffer shape on every rank.
        shape: Vec<i64>,
        /// The messages.
        messages: Vec<Message>,
    },
    /// Local slice / pack / unpack: rank `r`'s new buffer at `(i_0,..)` is its old buffer at
    /// `(maps[r][0][i_0], ..)`, padding where an index is -1.
    Local {
        /// New buffer shape on every rank.
        shape: Vec<i64>,
        /// Per rank, per dim, new index -> old index (or -1).
        maps: Vec<Vec<Vec<i64>>>,
    },
    /// The listed ranks' buffers become zero (no terms): Replicate -> Partial.
    Zero {
        /// Ranks zeroed.
        ranks: Vec<i64>,
    },
}

impl Step {
    /// Short name: `all-gather`, `reduce-scatter`, ...
    pub fn name(&self) -> &'static str {
        match self {
            Step::AllGather { .. } => "all-gather",
            Step::ReduceScatter { .. } => "reduce-scatter",
            Step::AllReduce { .. } => "all-reduce",
            Step::AllToAll { .. } => "all-to-all",
            Step::Broadcast { .. } => "broadcast",
            Step::SendRecv { .. } => "send-recv",
            Step::Local { .. } => "local",
            Step::Zero { .. } => "zero",
        }
    }
}

/// A plan: steps executed in order on `ranks` ranks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Number of ranks.
    pub ranks: i64,
    /// The steps.
    pub steps: Vec<Step>,
}
