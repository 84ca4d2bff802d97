//! `snapshot-command --wiring` and `wiring`, end to end: the capture block
//! run against a stand-in `kubectl` (`tests/data/wiring/kubectl.py`, which
//! answers from a cluster this test builds and executes every
//! `-o go-template` with Go's text/template, as kubectl does, through
//! Helm's SDK), then `wiring` over the snapshot it wrote.
//!
//! The clusters are the shapes of the matrix (`cozystack_oracle.shapes`:
//! what a v1.6.2 or v1.5.4 management cluster serves for each bundle
//! variant and optional package), with the bundle installed as `helm
//! install` renders it there (the chart's rendering for that cluster's
//! discovery), Kubewarden as its controller runs it (one webhook per
//! policy, the PolicyServer's Deployment and Service, audit-scanner's
//! CronJob as Kubewarden's chart renders it), and every SubjectAccessReview
//! answered by Kubernetes' RBAC over the chart's roles, Kubewarden's and
//! Kubernetes' `view` (`e2e::rbac`).
//!
//! - `every_shape_is_wired`: on each shape, `wiring` exits 0 and reports
//!   every policy active, and every policy that audits and has a served
//!   kind audited;
//! - `what_is_not_wired_fails_and_says_why`: a kind enabled after the
//!   install (exit 1, served but not audited, with the upgrade), the
//!   offline rendering on a cluster without BootBox (exit 1, audit-scanner
//!   errors the policy), audit-scanner without the chart's grants (exit 1),
//!   a crash-looping policy-server behind the controller's budget and a
//!   pending policy (exit 1), discovery forbidden (exit 3);
//! - `the_default_cluster_reads_as_the_readme_shows`: the report of a
//!   default v1.6.2 cluster, word for word (`wired.txt`;
//!   `UPDATE_GOLDEN=1` rewrites it).
//!
//! Needs dist/ (`make dist`) and Helm's SDK (tools/helm-venv); without the
//! SDK or the fact base it says it is skipped, a failure under CI.

// A test: a panic is a failing assertion, not a trap in a policy-server.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{command, root};
use e2e::helm::{Helm, Render, Served, Shape};
use e2e::rbac::{Account, Rbac, Request};
use serde_json::{Value, json};

const DATA: &str = "cli/tests/data/wiring";

/// Helm's SDK and the shapes, or why the test is skipped.
fn helm() -> Option<(Helm, Vec<Shape>)> {
    let on_ci = std::env::var("CI").is_ok_and(|ci| ci == "true");
    let data = root().join("../shared/data/cozystack-v1.6.2");
    match Helm::find().unwrap() {
        Some(helm) if data.is_dir() => {
            let shapes = helm.shapes().unwrap();
            Some((helm, shapes))
        }
        _ if on_ci => {
            panic!("Helm's SDK (tools/helm-venv) or ../shared/data is missing, a failure under CI")
        }
        _ => {
            println!("Helm's SDK or ../shared/data is missing: SKIPPED");
            None
        }
    }
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The chart rendered for a cluster serving `served` (or offline), with
/// `values`.
fn rendered(helm: &Helm, values: Value, served: Option<&[Served]>) -> Vec<Value> {
    let mut render = Render::with(values);
    if let Some(served) = served {
        render = render.serving(served);
    }
    helm.render(&[render])
        .unwrap()
        .pop()
        .unwrap()
        .documents()
        .unwrap()
}

fn kind<'d>(documents: &'d [Value], kind: &str) -> impl Iterator<Item = &'d Value> {
    let kind = kind.to_owned();
    documents.iter().filter(move |d| d["kind"] == kind.as_str())
}

/// What Kubewarden's chart gives audit-scanner (`kubewarden-controller`
/// 5.14.1 / `admission-controller` 6.0.2, `audit-scanner.yaml` and the
/// `audit-scanner.command` helper, default values): its CronJob.
fn audit_scanner_cronjob() -> Value {
    json!({
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": "audit-scanner", "namespace": "kubewarden"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "serviceAccountName": "audit-scanner",
            "containers": [{"name": "audit-scanner", "command": [
                "/audit-scanner", "--kubewarden-namespace", "kubewarden", "--loglevel", "info",
                "--extra-ca", "/pki/ca.crt", "-i", "kube-system", "-i", "kube-public",
                "-i", "kube-node-lease", "--report-kind", "openreports"]}]}}}}},
        "status": {"lastScheduleTime": "2026-12-05T07:00:00Z", "lastSuccessfulTime": "2026-12-05T07:01:00Z"},
    })
}

/// The discovery documents of a cluster serving `served`, by path.
fn discovery(served: &[Served]) -> serde_json::Map<String, Value> {
    let mut by_version: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for s in served {
        let path = if s.group.is_empty() {
            format!("/api/{}", s.version)
        } else {
            format!("/apis/{}/{}", s.group, s.version)
        };
        by_version.entry(path).or_default().push(json!({
            "name": s.resource, "singularName": "", "namespaced": s.namespaced, "kind": s.kind,
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        }));
    }
    by_version
        .into_iter()
        .map(|(path, resources)| {
            let gv = path.trim_start_matches("/apis/").trim_start_matches("/api/").to_owned();
            (path, json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}))
        })
        .collect()
}

/// The accounts' reads, as Kubernetes' RBAC decides them over the chart's
/// roles (`documents`), Kubewarden's for audit-scanner and `view`.
fn access(documents: &[Value]) -> Vec<Value> {
    let mut roles = Vec::new();
    let mut bindings = Vec::new();
    let data = |file: &str| {
        e2e::manifests::documents(
            &fs::read_to_string(root().join("e2e/tests/data/rbac").join(file)).unwrap(),
        )
        .unwrap()
    };
    for document in documents
        .iter()
        .cloned()
        .chain(data("kubewarden-audit-scanner.yaml"))
        .chain(data("kubernetes-view.yaml"))
    {
        match document["kind"].as_str() {
            Some("ClusterRole") => roles.push(serde_json::from_value(document).unwrap()),
            Some("ClusterRoleBinding") => bindings.push(serde_json::from_value(document).unwrap()),
            _ => {}
        }
    }
    let rbac = Rbac::new(roles, bindings);
    let mut resources: Vec<(String, String, Option<String>)> = Vec::new();
    for policy in e2e::policies().unwrap() {
        let metadata = e2e::module_metadata(&policy).unwrap();
        for rule in &metadata.rules {
            for group in &rule.api_groups {
                for resource in &rule.resources {
                    resources.push((group.clone(), resource.clone(), None));
                }
            }
        }
        let named: Vec<(String, String)> = metadata
            .reads_by_name()
            .unwrap()
            .into_iter()
            .map(|n| (n.kind, n.name))
            .chain(
                metadata
                    .secrets()
                    .unwrap()
                    .into_iter()
                    .map(|(_, n)| ("Secret".to_owned(), n)),
            )
            .collect();
        for read in &metadata.context_aware_resources {
            let (group, _) = shared::apps::group_version(&read.api_version);
            let resource = shared::apps::plural(group, &read.kind);
            resources.push((group.to_owned(), resource.clone(), None));
            for (_, name) in named.iter().filter(|(k, _)| *k == read.kind) {
                resources.push((group.to_owned(), resource.clone(), Some(name.clone())));
            }
        }
    }
    let mut allowed = Vec::new();
    for account in [
        Account::new("kubewarden", "audit-scanner"),
        Account::new("kubewarden", "cozystack-policy-server"),
    ] {
        for (group, resource, name) in &resources {
            for verb in ["get", "list"] {
                let mut request = Request::new(verb, group, resource);
                if let Some(name) = name {
                    request = request.named(name);
                }
                if rbac.allows(&account, &request) {
                    allowed.push(json!([
                        format!(
                            "system:serviceaccount:{}:{}",
                            account.namespace, account.name
                        ),
                        verb,
                        group,
                        resource,
                        name.clone().unwrap_or_default()
                    ]));
                }
            }
        }
    }
    allowed
}

/// A cluster with the bundle of `documents` installed on one serving
/// `served`, as the stand-in kubectl reads it; `change` alters it.
fn cluster(documents: &[Value], served: &[Served]) -> Value {
    let policies: Vec<Value> = kind(documents, "ClusterAdmissionPolicy")
        .map(|p| {
            let mut p = p.clone();
            p["status"] = json!({"policyStatus": "active"});
            p
        })
        .collect();
    let webhooks: Vec<Value> = policies
        .iter()
        .map(|p| {
            let name = format!("clusterwide-{}", p["metadata"]["name"].as_str().unwrap());
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                "metadata": {"name": name, "labels": {"kubewarden": "true"}},
                "webhooks": [{"name": format!("{name}.kubewarden.admission"), "rules": p["spec"]["rules"]}]})
        })
        .collect();
    let budgets: Vec<Value> = kind(documents, "PodDisruptionBudget")
        .map(|b| {
            let mut b = b.clone();
            b["status"] =
                json!({"disruptionsAllowed": 1, "currentHealthy": 2, "desiredHealthy": 1});
            b
        })
        .collect();
    let namespaces: Vec<Value> = ["kubewarden", "kube-system", "cozy-system", "tenant-root"]
        .iter()
        .map(|n| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}}))
        .collect();
    let report = json!({"apiVersion": "openreports.io/v1alpha1", "kind": "Report",
        "metadata": {"name": "7e57e7cd-0000-4000-8000-000000000001", "namespace": "tenant-root"},
        "scope": {"apiVersion": "apps.cozystack.io/v1alpha1", "kind": "Postgres", "name": "policy-check", "namespace": "tenant-root"},
        "results": [
            {"policy": "clusterwide-values-schema", "result": "fail", "message": "spec.resourcesPreset: must be one of …"},
            {"policy": "clusterwide-chart-render", "result": "pass"}]});
    json!({
        "context": "admin@cozystack",
        "lists": {
            "clusteradmissionpolicies.policies.kubewarden.io": policies,
            "policyservers.policies.kubewarden.io": kind(documents, "PolicyServer").cloned().collect::<Vec<_>>(),
            "validatingwebhookconfigurations.admissionregistration.k8s.io": webhooks,
            "poddisruptionbudgets.policy": budgets,
            "namespaces": namespaces,
            "reports.openreports.io": [report],
            "clusterreports.openreports.io": [],
        },
        "objects": {
            "deployments.apps/kubewarden/policy-server-cozystack-policies": {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "policy-server-cozystack-policies", "namespace": "kubewarden"},
                "spec": {"replicas": 2}, "status": {"replicas": 2, "readyReplicas": 2, "updatedReplicas": 2}},
            "services/kubewarden/policy-server-cozystack-policies": {
                "apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "policy-server-cozystack-policies", "namespace": "kubewarden",
                    "labels": {"app.kubernetes.io/instance": "policy-server-cozystack-policies"}},
                "spec": {"ports": [{"name": "policy-server", "port": 443, "targetPort": 8443}]}},
            "cronjobs.batch/kubewarden/audit-scanner": audit_scanner_cronjob(),
            // Where the platform records its release (the bundle reads it by name).
            "deployments.apps/cozy-system/cozystack-operator": {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "cozystack-operator", "namespace": "cozy-system"},
                "spec": {"template": {"spec": {"containers": [{"name": "cozystack-operator",
                    "image": "ghcr.io/cozystack/cozystack/cozystack-operator:v1.6.2"}]}}}},
            "configmaps/cozy-system/cozystack-version": {
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "cozystack-version", "namespace": "cozy-system"},
                "data": {"version": "54"}},
        },
        "raw": discovery(served),
        "access": access(documents),
    })
}

/// The capture block of `snapshot-command --wiring` run against `cluster`
/// in a work directory `name`, then `wiring` over the snapshot: its exit
/// code and text, and the capture's exit status.
fn wiring(cluster: &Value, name: &str) -> (i32, String, i32) {
    static BLOCK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let block =
        BLOCK.get_or_init(|| stdout(&command(&["snapshot-command", "--wiring"]).output().unwrap()));
    let work = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("wiring")
        .join(name.replace('/', "_"));
    let _ = fs::remove_dir_all(&work);
    let bin = work.join("bin");
    fs::create_dir_all(&bin).unwrap();
    fs::write(work.join("cluster.json"), cluster.to_string()).unwrap();
    // The resources the cluster knows: a get of any other fails at once,
    // without starting Python (most of the capture's reads are of kinds a
    // shape does not serve).
    let known: Vec<&str> = ["lists", "objects"]
        .iter()
        .flat_map(|k| cluster[*k].as_object().unwrap().keys())
        .map(|k| k.split('/').next().unwrap())
        .collect();
    fs::write(work.join("known"), format!("{}\n", known.join("\n"))).unwrap();
    executable(
        &bin.join("kubectl"),
        &format!(
            "#!/usr/bin/env bash\n\
             args=(\"$@\"); case ${{args[0]:-}} in --request-timeout*) args=(\"${{args[@]:1}}\") ;; esac\n\
             if [ \"${{args[0]:-}}\" = get ] && [[ \"$*\" != *--raw* ]]; then\n  \
             for a in \"${{args[@]:1}}\"; do case $a in -*) ;; *) resource=$(echo \"$a\" | sed -E 's/^([^.]+)\\.v[0-9]+((alpha|beta)[0-9]+)?(\\.|$)/\\1\\4/'); break ;; esac; done\n  \
             if ! grep -qx -- \"${{resource:-}}\" \"$KNOWN\"; then\n    \
             echo \"error: the server doesn't have a resource type \\\"${{resource%%.*}}\\\"\" >&2; exit 1\n  fi\n\
             fi\n\
             exec {} {} \"$@\"\n",
            root().join("target/helm-venv/bin/python").display(),
            root().join(DATA).join("kubectl.py").display()
        ),
    );
    executable(&bin.join("date"), "#!/bin/sh\necho 2026-12-05T08:00:00Z\n");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let capture = Command::new("bash")
        .arg("-c")
        .arg(block)
        .current_dir(&work)
        .env("PATH", path)
        .env("FAKE_CLUSTER", work.join("cluster.json"))
        .env("KNOWN", work.join("known"))
        .env("REPOSITORY", root())
        .output()
        .unwrap();
    let snapshot = work.join("snapshot.yaml");
    let output = command(&["wiring", snapshot.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        output.status.code() != Some(2),
        "{name}: wiring failed: {}\ncapture: {}",
        String::from_utf8_lossy(&output.stderr),
        String::from_utf8_lossy(&capture.stderr)
    );
    (
        output.status.code().unwrap(),
        stdout(&output),
        capture.status.code().unwrap(),
    )
}

fn executable(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    let mut permissions = fs::metadata(path).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    fs::set_permissions(path, permissions).unwrap();
}

fn shape<'s>(shapes: &'s [Shape], name: &str) -> &'s Shape {
    shapes.iter().find(|s| s.name == name).unwrap()
}

/// The policies that audit (backgroundAudit, a CREATE rule) and have a
/// kind the shape serves.
fn auditing(served: &[Served]) -> Vec<String> {
    let mut names = Vec::new();
    for policy in e2e::policies().unwrap() {
        let metadata = e2e::module_metadata(&policy).unwrap();
        if !metadata.background_audit {
            continue;
        }
        let serves = metadata.rules.iter().any(|rule| {
            serde_json::to_value(&rule.operations)
                .unwrap()
                .as_array()
                .unwrap()
                .iter()
                .any(|o| o == "CREATE")
                && rule.api_groups.iter().any(|g| {
                    rule.resources.iter().any(|r| {
                        served.iter().any(|s| {
                            s.group == *g
                                && s.resource == *r
                                && rule.api_versions.contains(&s.version)
                        })
                    })
                })
        });
        if serves {
            names.push(policy);
        }
    }
    names
}

/// The report's block of `policy`.
fn block<'t>(text: &'t str, policy: &str) -> &'t str {
    let start = text
        .find(&format!("\n{policy} ("))
        .unwrap_or_else(|| panic!("no {policy} in\n{text}"));
    let rest = &text[start + 1..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn every_shape_is_wired() {
    let Some((helm, shapes)) = helm() else { return };
    let mut failures = Vec::new();
    for shape in &shapes {
        let documents = rendered(&helm, json!({}), Some(&shape.resources));
        let (code, text, _) = wiring(&cluster(&documents, &shape.resources), &shape.name);
        if code != 0 {
            failures.push(format!("{}: wiring exited {code}:\n{text}", shape.name));
            continue;
        }
        for policy in auditing(&shape.resources) {
            let lines = block(&text, &policy);
            if !lines.contains("[  ok  ] active") || !lines.contains("[  ok  ] audited on") {
                failures.push(format!(
                    "{}: {policy} is not reported active and audited:\n{lines}",
                    shape.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn what_is_not_wired_fails_and_says_why() {
    let Some((helm, shapes)) = helm() else { return };
    let default = shape(&shapes, "v1.6.2/isp-full");
    let with_bootbox = shape(&shapes, "v1.6.2/isp-full+bootbox");
    let mut failures = Vec::new();
    let mut expect = |name: &str, cluster: Value, code: i32, says: &[&str]| {
        let (got, text, _) = wiring(&cluster, name);
        if got != code || !says.iter().all(|s| text.contains(s)) {
            failures.push(format!(
                "{name}: expected exit {code} saying {says:?}, got {got}:\n{text}"
            ));
        }
    };
    // BootBox enabled after the install: admitted, not audited until the
    // next `helm upgrade`.
    let installed = rendered(&helm, json!({}), Some(&default.resources));
    expect(
        "kind-enabled-later",
        cluster(&installed, &with_bootbox.resources),
        1,
        &[
            "served but not audited: apps.cozystack.io/v1alpha1/bootboxes",
            "helm upgrade cozystack-policies",
        ],
    );
    // The offline rendering (deploy/, helm template) on a cluster without
    // BootBox: audit-scanner errors values-schema.
    let offline = rendered(&helm, json!({}), None);
    expect(
        "offline-rendering",
        cluster(&offline, &default.resources),
        1,
        &[
            "audit-scanner errors it and audits nothing: its rules name apps.cozystack.io/v1alpha1/bootboxes",
        ],
    );
    // Without the chart's grants audit-scanner cannot list Cozystack's kinds.
    let no_grants = rendered(
        &helm,
        json!({"auditScanner": {"rbac": {"create": false}}}),
        Some(&default.resources),
    );
    expect(
        "audit-scanner-without-grants",
        cluster(&no_grants, &default.resources),
        1,
        &[
            "audit-scanner (audit-scanner) may not list",
            "apps.cozystack.io/v1alpha1/postgreses",
        ],
    );
    // A crash-looping policy-server behind the controller's budget, and a
    // policy that never became active.
    let mut broken = cluster(&installed, &default.resources);
    broken["objects"]["deployments.apps/kubewarden/policy-server-cozystack-policies"]["status"]["readyReplicas"] =
        json!(0);
    broken["lists"]["poddisruptionbudgets.policy"].as_array_mut().unwrap().push(json!({
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
        "metadata": {"name": "policy-server-cozystack-policies", "namespace": "kubewarden"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {
            "app.kubernetes.io/instance": "policy-server-cozystack-policies",
            "app.kubernetes.io/part-of": "kubewarden", "kubewarden/policy-server": "cozystack-policies"}}}}));
    broken["lists"]["clusteradmissionpolicies.policies.kubewarden.io"][0]["status"]["policyStatus"] =
        json!("pending");
    expect(
        "policy-server-crash-looping",
        broken,
        1,
        &[
            "0 of 2 pods ready",
            "without unhealthyPodEvictionPolicy",
            "status \"pending\", not active",
        ],
    );
    // Discovery forbidden: whether audit-scanner audits is unknown.
    let mut forbidden = cluster(&installed, &default.resources);
    forbidden["raw"]["/apis/apps.cozystack.io/v1alpha1"] = json!("forbidden");
    expect(
        "discovery-forbidden",
        forbidden,
        3,
        &[
            "[NOT CHECKED] audit: what the cluster serves of apps.cozystack.io/v1alpha1 could not be read",
        ],
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_default_cluster_reads_as_the_readme_shows() {
    let Some((helm, shapes)) = helm() else { return };
    let default = shape(&shapes, "v1.6.2/isp-full");
    let documents = rendered(&helm, json!({}), Some(&default.resources));
    let (code, text, capture) = wiring(&cluster(&documents, &default.resources), "golden");
    assert_eq!((code, capture), (0, 0), "{text}");
    let golden: PathBuf = root().join(DATA).join("wired.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::write(&golden, &text).unwrap();
    } else {
        assert_eq!(
            fs::read_to_string(&golden).unwrap_or_default(),
            text,
            "{}",
            golden.display()
        );
    }
}
