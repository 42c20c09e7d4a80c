//! The alpha-beta cost model with a stated topology (spec/distributed.md section 5). A claim
//! about speed, never part of a certificate.
//!
//! Topology: `ranks_per_node` consecutive ranks share a node with NVLink all-to-all (every pair
//! at `nvlink` alpha/beta); ranks on different nodes talk over the network (`network` alpha/beta
//! per rank). A collective whose group stays in one node runs at NVLink rates, one that spans
//! nodes at network rates (two levels: the slower level bounds the ring).

/// Latency and bandwidth of one link class.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Per-step latency, seconds.
    pub alpha: f64,
    /// Bandwidth per rank per direction, bytes/second.
    pub beta: f64,
}

/// The machine a plan is costed on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Topology {
    /// Ranks per node (NVLink domain).
    pub ranks_per_node: i64,
    /// Inside a node.
    pub nvlink: Link,
    /// Across nodes.
    pub network: Link,
}

impl Default for Topology {
    /// H200 nodes of 8 GPUs: NVLink 4 (450 GB/s per direction, 3 us per step), 400 Gb/s
    /// InfiniBand per GPU across nodes (50 GB/s, 10 us per step).
    fn default() -> Topology {
        Topology {
            ranks_per_node: 8,
            nvlink: Link {
                alpha: 3e-6,
                beta: 450e9,
            },
            network: Link {
                alpha: 10e-6,
                beta: 50e9,
            },
        }
    }
}

impl Topology {
    /// One line stating the model, printed with every plan.
    pub fn describe(&self) -> String {
        format!(
            "alpha-beta model: {} ranks/node, NVLink all-to-all in a node (alpha {:.0} us, beta {:.0} GB/s), network across nodes (alpha {:.0} us, beta {:.0} GB/s)",
            self.ranks_per_node,
            self.nvlink.alpha * 1e6,
            self.nvlink.beta / 1e9,
            self.network.alpha * 1e6,
            self.network.beta / 1e9
        )
    }

    /// The link class between two ranks.
    pub fn link(&self, a: i64, b: i64) -> (Link, &'static str) {
        if a / self.ranks_per_node == b / self.ranks_per_node {
            (self.nvlink, "nvlink")
        } else {
            (self.network, "network")
        }
    }

    /// The link class of a group: NVLink when it stays in one node.
    pub fn group_link(&self, g: &[i64]) -> (Link, &'static str) {
        let node = g.first().map(|r| r / self.ranks_per_node);
        if g.iter().all(|r| Some(r / self.ranks_per_node) == node) {
            (self.nvlink, "nvlink")
        } else {
            (self.network, "network")
        }
    }
}
