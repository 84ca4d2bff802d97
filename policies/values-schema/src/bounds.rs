//! Counts the charts render one item per unit of: past a few thousand,
//! Helm itself runs out of memory or time rendering them, and the release
//! fails without a message that names the field.
//!
//! Found by rendering every integer field of every v1.6.2 chart with Helm
//! at 100,000 and 10^12 (the oracle, `oracle/`): these fields, and only
//! these, exhaust 3 GiB (the loops are named in [`BOUNDS`]). At [`MAX`]
//! each renders in seconds; the next order of magnitude already exhausts
//! SeaweedFS' volume servers. No Cozystack deployment runs a thousand
//! replicas of one component, so the bound denies only what cannot work.

/// The largest count a bounded field may hold.
pub const MAX: u32 = 1000;

/// One field the charts loop over.
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    pub kind: &'static str,
    /// Below `spec`.
    pub path: &'static [&'static str],
    /// What the chart writes per unit, and where (for the message).
    pub loop_: &'static str,
}

/// Every bounded field. Sources under `packages/` of Cozystack v1.6.2.
pub const BOUNDS: &[Bound] = &[
    Bound {
        kind: "ClickHouse",
        path: &["clickhouseKeeper", "replicas"],
        loop_: "a Keeper entry per replica (apps/clickhouse/templates/clickhouse.yaml)",
    },
    Bound {
        kind: "Etcd",
        path: &["replicas"],
        loop_: "a cleanup step per member (extra/etcd/templates/hooks/cleanup.yaml)",
    },
    Bound {
        kind: "HTTPCache",
        path: &["nginx", "replicas"],
        loop_: "a Deployment and a haproxy backend per replica (apps/http-cache/templates/nginx/deployment.yaml)",
    },
    Bound {
        kind: "NATS",
        path: &["replicas"],
        loop_: "a cluster route per replica (system/nats/charts/nats/files/config/cluster.yaml)",
    },
    Bound {
        kind: "OpenBAO",
        path: &["replicas"],
        loop_: "a raft retry_join per replica (apps/openbao/templates/openbao.yaml)",
    },
    Bound {
        kind: "SeaweedFS",
        path: &["master", "replicas"],
        loop_: "a master address per replica (system/seaweedfs/charts/seaweedfs/templates/shared/_helpers.tpl)",
    },
    Bound {
        kind: "SeaweedFS",
        path: &["volume", "replicas"],
        loop_: "a resize step per volume server (system/seaweedfs/charts/seaweedfs/templates/volume/volume-resize-hook.yaml)",
    },
];
