//! The snapshot of a large Cozystack 1.5.4 management cluster, as the
//! capture block writes it: each object a flow-style document of the
//! fields the rules read, then the record of every read the block makes
//! (every one captured).
//!
//! Per tenant: its Tenant application and HelmRelease, a ResourceQuota,
//! fifteen application HelmReleases, forty PersistentVolumeClaims, twelve
//! StatefulSets and six Certificates; every third tenant a SeaweedFS with
//! its volumes and filer database, every fourth a tenant Kubernetes with
//! its KubeadmConfigTemplate, every fifth an Etcd with its legacy
//! EtcdCluster and Certificates. Around them: Nodes, CustomResourceDefinitions,
//! APIServices, StorageClasses, the platform Package, Namespace, ConfigMap,
//! Secret and etcd-operator Deployment.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{Value, json};

const TIMESTAMP: &str = "2025-09-01T10:00:00Z";
const APPS: &str = "apps.cozystack.io/v1alpha1";
const RELEASE: &str = "helm.toolkit.fluxcd.io/v2";

/// Writes documents to the snapshot, counting them.
struct Snapshot<W> {
    out: W,
    objects: usize,
}

impl<W: Write> Snapshot<W> {
    fn object(&mut self, object: Value) -> Result<()> {
        writeln!(self.out, "---\n{object}")?;
        self.objects += 1;
        Ok(())
    }
}

fn meta(name: &str, namespace: &str) -> Value {
    if namespace.is_empty() {
        json!({"name": name, "creationTimestamp": TIMESTAMP})
    } else {
        json!({"name": name, "namespace": namespace, "creationTimestamp": TIMESTAMP})
    }
}

fn app_labels(kind: &str, name: &str) -> Value {
    json!({"apps.cozystack.io/application.group": "apps.cozystack.io",
        "apps.cozystack.io/application.kind": kind, "apps.cozystack.io/application.name": name,
        "app.kubernetes.io/managed-by": "Helm", "helm.toolkit.fluxcd.io/name": format!("{}-{name}", kind.to_lowercase()),
        "helm.toolkit.fluxcd.io/namespace": "tenant-root"})
}

/// The application kinds a tenant's HelmReleases are of.
const APPLICATIONS: [&str; 15] = [
    "Postgres", "Redis", "MariaDB", "Kafka", "NATS", "RabbitMQ", "ClickHouse", "MongoDB", "Qdrant",
    "OpenSearch", "Bucket", "VMInstance", "VMDisk", "HTTPCache", "TCPBalancer",
];

/// Writes the snapshot of a cluster of `tenants` tenants to `path`, with
/// the record of the reads of the capture block `block`; how many objects
/// it holds.
pub fn write(path: &Path, tenants: usize, block: &str) -> Result<usize> {
    let file = std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut snapshot = Snapshot {
        out: std::io::BufWriter::new(file),
        objects: 0,
    };
    platform(&mut snapshot)?;
    for i in 0..tenants {
        tenant(&mut snapshot, i)?;
    }
    record(&mut snapshot.out, block)?;
    snapshot.out.flush()?;
    Ok(snapshot.objects)
}

fn platform<W: Write>(s: &mut Snapshot<W>) -> Result<()> {
    s.object(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "cozy-system",
        "creationTimestamp": TIMESTAMP, "labels": {"cozystack.io/system": "true"},
        "annotations": {"helm.sh/resource-policy": "keep"}}}))?;
    s.object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cozystack-version",
        "namespace": "cozy-system", "creationTimestamp": TIMESTAMP, "labels": {"platform.cozystack.io/no-delete": "true"},
        "annotations": {"helm.sh/resource-policy": "keep"}}, "data": {"version": "46"}}))?;
    s.object(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "cozy-backups-creds",
        "namespace": "cozy-velero", "annotations": {"cozystack-policies.io/captured-keys":
            "AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY bucketName endpoint"}},
        "data": {"AWS_ACCESS_KEY_ID": "KHJlZGFjdGVkKQ==", "AWS_SECRET_ACCESS_KEY": "KHJlZGFjdGVkKQ==",
            "bucketName": "Y296eS1iYWNrdXBzLThmM2E=", "endpoint": "czMuZXhhbXBsZS5vcmc="}}))?;
    s.object(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": meta("etcd-operator-controller-manager", "cozy-etcd-operator")}))?;
    s.object(json!({"apiVersion": "cozystack.io/v1alpha1", "kind": "Package",
        "metadata": meta("cozystack.cozystack-platform", ""),
        "spec": {"components": {"platform": {"values": {"migrations": {"enabled": true, "etcdAdoptSkipBackup": false},
            "resources": {"cpuAllocationRatio": 10, "memoryAllocationRatio": 1}}}}}}))?;
    s.object(json!({"apiVersion": "strategy.backups.cozystack.io/v1alpha1", "kind": "Etcd",
        "metadata": meta("cozy-default-etcd", ""),
        "spec": {"template": {"destination": {"s3": {"endpoint": "https://s3.example.org", "bucket": "cozy-backups-8f3a"}}}}}))?;
    s.object(json!({"apiVersion": "objectstorage.k8s.io/v1alpha1", "kind": "BucketClaim",
        "metadata": meta("cozy-backups", "tenant-root"), "status": {"bucketName": "cozy-backups-8f3a"}}))?;
    for i in 0..30 {
        s.object(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i}"),
            "creationTimestamp": TIMESTAMP, "labels": {"kubernetes.io/hostname": format!("node-{i}"), "kubernetes.io/os": "linux"},
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
            "status": {"nodeInfo": {"kubeletVersion": "v1.33.4"},
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}))?;
    }
    for i in 0..150 {
        s.object(json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("kind{i}s.group{i}.example.org"), "creationTimestamp": TIMESTAMP},
            "spec": {"group": format!("group{i}.example.org"), "names": {"plural": format!("kind{i}s")},
                "versions": [{"name": "v1", "served": true}]}}))?;
    }
    for (group, version) in [("apps.cozystack.io", "v1alpha1"), ("core.cozystack.io", "v1alpha1")]
        .into_iter()
        .chain((0..38).map(|_| ("apps", "v1")))
    {
        s.object(json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": format!("{version}.{group}"), "creationTimestamp": TIMESTAMP},
            "spec": {"group": group, "version": version},
            "status": {"conditions": [{"type": "Available", "status": "True", "reason": "Passed"}]}}))?;
    }
    for (name, layers, remote) in [
        ("replicated", "drbd storage", "true"),
        ("local", "storage", "false"),
        ("replicated-ssd", "drbd storage", "true"),
        ("local-ssd", "storage", "false"),
    ] {
        s.object(json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": meta(name, ""),
            "provisioner": "linstor.csi.linbit.com",
            "parameters": {"linstor.csi.linbit.com/storagePool": "data", "linstor.csi.linbit.com/layerList": layers,
                "linstor.csi.linbit.com/allowRemoteVolumeAccess": remote}}))?;
    }
    Ok(())
}

fn tenant<W: Write>(s: &mut Snapshot<W>, i: usize) -> Result<()> {
    let name = format!("t{i}");
    let namespace = format!("tenant-{name}");
    let quotas = json!({"cpu": "4", "memory": "8Gi"});
    s.object(json!({"apiVersion": APPS, "kind": "Tenant", "metadata": meta(&name, "tenant-root"),
        "spec": {"host": "", "etcd": false, "monitoring": false, "ingress": false, "seaweedfs": i.is_multiple_of(3),
            "schedulingClass": "", "resourceQuotas": quotas}}))?;
    s.object(json!({"apiVersion": RELEASE, "kind": "HelmRelease",
        "metadata": {"name": format!("tenant-{name}"), "namespace": "tenant-root", "creationTimestamp": TIMESTAMP,
            "labels": app_labels("Tenant", &name)},
        "spec": {"values": {"resourceQuotas": quotas}}}))?;
    s.object(json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta("tenant-quota", &namespace),
        "status": {"used": {"limits.cpu": "2", "limits.memory": "4Gi", "requests.cpu": "200m"}}}))?;
    for (a, kind) in APPLICATIONS.iter().enumerate() {
        let app = format!("{}-{a}", kind.to_lowercase());
        s.object(json!({"apiVersion": RELEASE, "kind": "HelmRelease",
            "metadata": {"name": app, "namespace": namespace, "creationTimestamp": TIMESTAMP,
                "labels": app_labels(kind, &app)}}))?;
    }
    for (p, kind) in APPLICATIONS.iter().cycle().take(40).enumerate() {
        s.object(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": format!("data-{}-{p}", kind.to_lowercase()), "namespace": namespace,
                "creationTimestamp": TIMESTAMP, "labels": {"app.kubernetes.io/instance": format!("app-{p}"),
                    "app.kubernetes.io/managed-by": "Helm"}}}))?;
    }
    for (t, kind) in APPLICATIONS.iter().take(12).enumerate() {
        s.object(json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": format!("{}-{t}", kind.to_lowercase()), "namespace": namespace,
                "creationTimestamp": TIMESTAMP, "labels": {"app.kubernetes.io/name": kind.to_lowercase()}}}))?;
    }
    for c in 0..6 {
        s.object(json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": meta(&format!("cert-{c}"), &namespace),
            "spec": {"dnsNames": [format!("app-{c}.{namespace}.svc")]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}}))?;
    }
    if i.is_multiple_of(3) {
        s.object(json!({"apiVersion": APPS, "kind": "SeaweedFS", "metadata": meta("seaweedfs", &namespace),
            "spec": {"topology": "Simple", "replicationFactor": 2, "host": "", "db": {"replicas": 2, "size": "10Gi"},
                "master": {"replicas": 3}, "filer": {"replicas": 2}, "volume": {"replicas": 2, "size": "10Gi"}}}))?;
        s.object(json!({"apiVersion": RELEASE, "kind": "HelmRelease",
            "metadata": meta("seaweedfs-system", &namespace),
            "spec": {"values": {"seaweedfs": {"fullnameOverride": "seaweedfs"}}}}))?;
        s.object(json!({"apiVersion": "postgresql.cnpg.io/v1", "kind": "Cluster",
            "metadata": meta("seaweedfs-db", &namespace)}))?;
        for v in 0..2 {
            s.object(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                "metadata": meta(&format!("data1-seaweedfs-volume-{v}"), &namespace)}))?;
        }
        s.object(json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "seaweedfs-volume",
            "namespace": namespace, "creationTimestamp": TIMESTAMP, "labels": {"app.kubernetes.io/name": "seaweedfs"}}}))?;
    }
    if i.is_multiple_of(4) {
        s.object(json!({"apiVersion": APPS, "kind": "Kubernetes", "metadata": meta("k8s", &namespace),
            "spec": {"version": "v1.33", "storageClass": "replicated", "host": "", "controlPlane": {"replicas": 2},
                "nodeHealthCheck": {"maxUnhealthy": "0%"},
                "nodeGroups": {"md0": {"minReplicas": 1, "maxReplicas": 10, "instanceType": "u1.medium",
                    "diskSize": "20Gi", "storageClass": "", "roles": ["ingress-nginx"], "resources": {}, "gpus": [], "kubelet": {}}},
                "addons": {"ingressNginx": {"enabled": true, "hosts": []}, "certManager": {"enabled": false}}}}))?;
        s.object(json!({"apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1", "kind": "KubeadmConfigTemplate",
            "metadata": {"name": "kubernetes-k8s-md0", "namespace": namespace, "creationTimestamp": TIMESTAMP,
                "labels": {"app.kubernetes.io/managed-by": "Helm"},
                "annotations": {"helm.sh/resource-policy": "keep", "meta.helm.sh/release-name": "kubernetes-k8s"}}}))?;
    }
    if i.is_multiple_of(5) {
        s.object(json!({"apiVersion": APPS, "kind": "Etcd", "metadata": meta("etcd", &namespace),
            "spec": {"replicas": 3, "size": "4Gi", "backup": {"enabled": false, "schedule": "0 2 * * *",
                "destinationPath": "", "endpointURL": "", "region": "", "forcePathStyle": true, "s3AccessKey": "",
                "s3SecretKey": "", "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1}}}))?;
        s.object(json!({"apiVersion": "etcd.aenix.io/v1alpha1", "kind": "EtcdCluster",
            "metadata": meta("etcd", &namespace), "spec": {"replicas": 3}}))?;
        for role in ["server", "peer"] {
            s.object(json!({"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": meta(&format!("etcd-{role}"), &namespace),
                "spec": {"dnsNames": [format!("etcd-0.etcd-headless.{namespace}.svc")]},
                "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}]}}))?;
        }
    }
    Ok(())
}

/// The record of every read of the capture block `block` (the `capture`
/// lines `snapshot-command` prints), each captured.
fn record(out: &mut impl Write, block: &str) -> Result<()> {
    let unquoted = |word: &str| word.trim_matches('\'').to_owned();
    let reads: Vec<Value> = block
        .lines()
        .filter_map(|line| line.strip_prefix("capture "))
        .map(|line| {
            let words: Vec<String> = line.split_whitespace().take(5).map(unquoted).collect();
            let word = |i: usize| words.get(i).cloned().unwrap_or_default();
            let mut read = serde_json::Map::new();
            for (key, value) in [("apiVersion", word(0)), ("kind", word(1)), ("resource", word(2))] {
                read.insert(key.to_owned(), value.into());
            }
            if !word(4).is_empty() {
                if !word(3).is_empty() {
                    read.insert("namespace".to_owned(), word(3).into());
                }
                read.insert("name".to_owned(), word(4).into());
            }
            read.insert("result".to_owned(), "captured".into());
            Value::Object(read)
        })
        .collect();
    let record = json!({"apiVersion": "cozystack-policies.io/v1alpha1", "kind": "SnapshotCapture",
        "metadata": {"name": "snapshot"}, "context": "admin@bench", "capturedAt": TIMESTAMP, "reads": reads});
    writeln!(out, "---\n{record}")?;
    Ok(())
}
