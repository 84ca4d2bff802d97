//! The tenant `Kubernetes` application (`packages/apps/kubernetes`, v1.6.2):
//! its version matrix, addons that need other addons, workers or a newer
//! Kubernetes, and the render checks of node groups and apiserver volumes.
//! What differs between releases is read from the release's charts
//! ([`release::Fact`], the keys of `files/versions.yaml`).

use std::cmp::Ordering;

use release::{Fact, Release};
use shared::{Field, FieldError, FieldPath, Value};
use sprig::cozy_lib::to_decimal;
use sprig::decimal::Decimal;

use shared::Findings;

use crate::kubelet;
use crate::skip_wrong_types;
use crate::values::{enabled, int_or, truthy};

/// The chart default of `spec.version` (`values.yaml`).
pub const DEFAULT_VERSION: &str = "v1.35";
/// The minor the Flux addon needs: Flux v2.8 (helm-controller v1.5), from
/// Cozystack v1.5.0 on (release notes v1.5 and v1.6, "Kubernetes 1.33 or
/// newer ... on any tenant cluster enabling the Flux addon").
pub const FLUX_MINIMUM_MINOR: u32 = 33;
/// The Kubernetes versions a release's chart renders (`files/versions.yaml`).
#[derive(Debug, Clone, Copy)]
pub struct Matrix {
    /// The oldest minor.
    oldest: u32,
    /// The keys as `_versions.tpl` lists them in its message.
    supported: &'static str,
}

impl Matrix {
    /// The matrix of `release`: v1.6.0 dropped v1.30, which v1.5.x has.
    pub fn of(release: Release) -> Self {
        let charts = release.charts();
        Self {
            oldest: charts.oldest_kubernetes,
            supported: charts.kubernetes,
        }
    }
}

/// Addons whose workloads run on the tenant's workers (`gatewayAPI`
/// installs CRDs only; cilium and coredns cannot be disabled).
const WORKLOAD_ADDONS: &[&str] = &[
    "certManager",
    "fluxcd",
    "gpuOperator",
    "hami",
    "ingressNginx",
    "monitoringAgents",
    "ouroboros",
    "velero",
    "verticalPodAutoscaler",
];

/// The role the ingress-nginx DaemonSet selects
/// (`helmreleases/ingress-nginx.yaml`, `nodeSelector`).
const INGRESS_ROLE: &str = "ingress-nginx";

/// Volume names the chart uses for the Talos control-plane secrets
/// (`templates/cluster.yaml`).
const RESERVED_VOLUMES: &[&str] = &["talos-ca", "talos-tls-cert"];
/// The only volume sources allowed on the control-plane pod.
const VOLUME_SOURCES: &[&str] = &["configMap", "secret"];

/// The minor of `v1.<minor>`, if `version` reads so.
pub fn minor(version: &str) -> Option<u32> {
    let digits = version.strip_prefix("v1.")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The effective `spec.version`: the value, or the chart default.
fn version<'a>(spec: &Field<'a>) -> Result<(Field<'a>, &'a str), FieldError> {
    let field = spec.field("version")?;
    let version = field.string_or(DEFAULT_VERSION)?;
    Ok((field, version))
}

/// Every rule over the spec of a `Kubernetes`; a rule whose field has the
/// wrong type is skipped (values-schema reports the type).
pub fn check(spec: &Field<'_>, release: Release, out: &mut Findings) {
    let matrix = Matrix::of(release);
    skip_wrong_types(removed_version(spec, matrix, out));
    skip_wrong_types(flux_minimum_version(spec, matrix, out));
    skip_wrong_types(addon_dependencies(spec, out));
    skip_wrong_types(ouroboros_gateway_api(spec, out));
    skip_wrong_types(if release.has(Fact::Md0Default) {
        workers_v1_5_4(spec, out)
    } else {
        workers(spec, out)
    });
    skip_wrong_types(node_groups(spec, release, out));
    // v1.5's cluster.yaml reads neither maxUnhealthy's format nor
    // apiServer's extra volumes.
    if release.has(Fact::MaxUnhealthy) {
        skip_wrong_types(max_unhealthy(spec, out));
    }
    if release.has(Fact::ApiServerVolumes) {
        skip_wrong_types(extra_volumes(spec, out));
    }
    // Once per node group, and there is always one (the implicit md0).
    if release.has(Fact::PositiveDuration) {
        durations(spec, CLUSTER_DURATIONS, out);
    }
}

/// A ComputePlane (`extra/computeplane/templates/cluster.yaml` 42–52 of
/// v1.7.0-rc.3c780acd): node groups none of which has role ingress-nginx
/// and `maxReplicas >= 1`, which the chart refuses (the module turns
/// ingress-nginx on). Without node groups it renders.
pub fn compute_plane(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let Some(groups) = groups(spec)? else {
        return Ok(());
    };
    if !groups
        .iter()
        .any(|group| group.max >= 1 && group.roles.contains(&INGRESS_ROLE))
    {
        out.add(
            crate::rules::COMPUTEPLANE_WITHOUT_INGRESS,
            spec.field("nodeGroups")?.path(),
            "no node group has role ingress-nginx and maxReplicas >= 1, which a ComputePlane needs (it turns \
             ingress-nginx on; the chart fails to render). Add ingress-nginx to the roles of a node group.",
        );
    }
    Ok(())
}

/// The durations of a Kubernetes that `kubernetes.positiveDuration` checks:
/// the autoscaler's annotation of each worker MachineDeployment and the
/// timeouts of each group's MachineHealthCheck, implicit md0 included (`cluster.yaml` 838, 953, 956
/// of v1.7.0-rc.3c780acd).
const CLUSTER_DURATIONS: [&str; 3] = [
    "maxNodeProvisionTime",
    "nodeHealthCheck.readyUnknownTimeout",
    "nodeHealthCheck.readyFalseTimeout",
];

/// The same durations of a KubernetesNodes pool (`nodegroup.yaml` 491, 598,
/// 601 of v1.7.0-rc.3c780acd).
const POOL_DURATIONS: [&str; 3] = [
    "maxNodeProvisionTime",
    "readyUnknownTimeout",
    "readyFalseTimeout",
];

/// `kubernetes.positiveDuration` (`apps/kubernetes/templates/_helpers.tpl`,
/// [`Fact::PositiveDuration`]) over each of `paths` that holds a string; a
/// value of another type is values-schema's.
fn durations(spec: &Field<'_>, paths: [&str; 3], out: &mut Findings) {
    for path in paths {
        let Ok(field) = spec.at(path) else {
            continue;
        };
        if let Ok(Some(value)) = field.string()
            && !is_positive_duration(value)
        {
            let path = field.path();
            let source = path.to_string();
            let source = source.strip_prefix("spec.").unwrap_or(&source);
            let message = format!(
                "{source} must be a whole number of s, m or h (e.g. 30m, 1h30m), got {value:?} (the chart fails \
                 to render)."
            );
            out.add(crate::rules::DURATION_FORMAT, path, message);
        }
    }
}

/// Whether `value` matches `kubernetes.positiveDuration`'s
/// `^[1-9][0-9]{0,4}[smh]([0-9]{1,5}[smh]){0,2}$`: one to three segments of
/// one to five digits and a unit, the first not starting with 0.
fn is_positive_duration(value: &str) -> bool {
    let mut rest = value.as_bytes();
    let mut segments = 0;
    while let Some(&first) = rest.first() {
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let unit = rest.get(digits).copied();
        if !(1..=5).contains(&digits)
            || (segments == 0 && first == b'0')
            || !matches!(unit, Some(b's' | b'm' | b'h'))
        {
            return false;
        }
        rest = rest.get(digits + 1..).unwrap_or_default();
        segments += 1;
    }
    (1..=3).contains(&segments)
}

/// `_versions.tpl` and the Talos matrix of `cluster.yaml` for versions this
/// or an earlier release removed (v1.30 left in v1.6.0). Other values
/// outside the enum are values-schema's.
pub fn removed_version(
    spec: &Field<'_>,
    matrix: Matrix,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let (field, version) = version(spec)?;
    let Some(minor) = minor(version) else {
        return Ok(());
    };
    if minor >= matrix.oldest {
        return Ok(());
    }
    let Matrix { oldest, supported } = matrix;
    let when = if minor == 30 {
        "v1.30 left the Talos support matrix in Cozystack v1.6 and migration 46 moved stored clusters to v1.31, \
         but a GitOps source that still says v1.30 puts it back on its next reconcile"
    } else {
        "this version was removed in an earlier Cozystack release"
    };
    out.add(
        crate::rules::REMOVED_VERSION,
        field.path(),
        format!(
            "Kubernetes version {version} is not supported, allowed versions are {supported}: the chart fails to render \
             (templates/_versions.tpl). {when}. Set spec.version to v1.{oldest} or newer, in Git too if a \
             repository applies this object."
        ),
    );
    Ok(())
}

/// An UPDATE that lowers the minor version (warning): Kubernetes supports
/// no minor downgrades; a GitOps source re-applying an old version after
/// an upgrade or a migration is the usual cause.
pub fn downgrade(
    old: &Field<'_>,
    new: &Field<'_>,
    matrix: Matrix,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let (_, before) = version(old)?;
    let (field, after) = version(new)?;
    if let (Some(from), Some(to)) = (minor(before), minor(after))
        && to < from
        && to >= matrix.oldest
    {
        out.add(
            crate::rules::VERSION_DOWNGRADE,
            field.path(),
            format!(
                "{before} -> {after} is a downgrade, which Kubernetes does not support. If a GitOps source re-applied \
                 an old version, update it there."
            ),
        );
    }
    Ok(())
}

/// The Flux addon below Kubernetes v1.33 (release notes; the chart renders
/// it, the tenant's Flux does not support the version).
pub fn flux_minimum_version(
    spec: &Field<'_>,
    matrix: Matrix,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let flux = spec.at("addons.fluxcd.enabled")?;
    if flux.bool()? != Some(true) {
        return Ok(());
    }
    let (_, version) = version(spec)?;
    if let Some(minor) = minor(version)
        && (matrix.oldest..FLUX_MINIMUM_MINOR).contains(&minor)
    {
        out.add(crate::rules::FLUX_MINIMUM_VERSION,
            flux.path(),
            format!(
                "the Flux addon (Flux v2.8) needs Kubernetes v1.{FLUX_MINIMUM_MINOR} or newer, and spec.version is \
                 {version}. Raise spec.version first, or disable the addon."
            ),
        );
    }
    Ok(())
}

/// Addons the templates refuse without another addon
/// (`helmreleases/hami.yaml`, `helmreleases/ouroboros.yaml`).
pub fn addon_dependencies(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let addons = spec.field("addons")?;
    for (addon, needs, message) in [
        (
            "hami",
            "gpuOperator",
            "addons.hami requires addons.gpuOperator to be enabled",
        ),
        (
            "ouroboros",
            "ingressNginx",
            "addons.ouroboros.enabled requires addons.ingressNginx.enabled — ouroboros is a hairpin-NAT fix for \
             tenant ingress-nginx and has nothing to fix against without it.",
        ),
    ] {
        let Ok(field) = addons.at(&format!("{addon}.enabled")) else {
            continue;
        };
        if field.bool() != Ok(Some(true)) {
            continue;
        }
        let Ok(needed) = enabled(&addons, needs) else {
            continue;
        };
        if !needed {
            out.add(
                crate::rules::ADDON_REQUIRES_ADDON,
                field.path(),
                format!(
                    "{message} (the chart fails to render). Set spec.addons.{needs}.enabled: true, or disable \
                     spec.addons.{addon}."
                ),
            );
        }
    }
    Ok(())
}

/// `ouroboros.yaml`: a Gateway-API override without the Gateway API addon.
pub fn ouroboros_gateway_api(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let addons = spec.field("addons")?;
    let flag = addons.at("ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled")?;
    let on = match flag.json() {
        Some(Value::Bool(on)) => *on,
        Some(Value::Number(n)) => n.as_f64() == Some(1.0),
        Some(Value::String(text)) => {
            matches!(
                text.to_ascii_lowercase().as_str(),
                "true" | "1" | "yes" | "on" | "y"
            )
        }
        _ => false,
    };
    if on && !enabled(&addons, "gatewayAPI")? {
        out.add(
            crate::rules::OUROBOROS_GATEWAY_API,
            flag.path(),
            "addons.ouroboros.valuesOverride.ouroboros.controller.gatewayApi.enabled=true requires \
             addons.gatewayAPI.enabled=true on the same tenant — Gateway-API CRDs would otherwise be missing and the \
             controller would CrashLoopBackOff on WaitForCacheSync (the chart fails to render). Enable \
             spec.addons.gatewayAPI or drop the override.",
        );
    }
    Ok(())
}

/// One effective node group.
struct Group<'a> {
    field: Field<'a>,
    min: i64,
    max: i64,
    roles: Vec<&'a str>,
}

/// The node groups the chart renders: `spec.nodeGroups`, or the implicit
/// `md0` (`minReplicas: 0`, `maxReplicas: 10`, `roles: [ingress-nginx]`)
/// when there are none (`_helpers.tpl`, `kubernetes.nodeGroups`). `None`
/// for the implicit group.
fn groups<'a>(spec: &Field<'a>) -> Result<Option<Vec<Group<'a>>>, FieldError> {
    let entries = spec.field("nodeGroups")?.entries()?;
    if entries.is_empty() {
        return Ok(None);
    }
    let mut groups = Vec::new();
    for (_, group) in entries {
        let mut roles = Vec::new();
        for role in group.field("roles")?.items()? {
            if let Some(role) = role.string()? {
                roles.push(role);
            }
        }
        groups.push(Group {
            min: int_or(&group.field("minReplicas")?, 0)?,
            max: int_or(&group.field("maxReplicas")?, 10)?,
            roles,
            field: group,
        });
    }
    Ok(Some(groups))
}

/// Addons enabled while the node groups can give them no worker.
pub fn workers(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let addons = spec.field("addons")?;
    let on: Vec<&str> = WORKLOAD_ADDONS
        .iter()
        .copied()
        .filter(|addon| enabled(&addons, addon) == Ok(true))
        .collect();
    if on.is_empty() {
        return Ok(());
    }
    let node_groups = spec.field("nodeGroups")?;
    let Some(groups) = groups(spec)? else {
        // The implicit md0: ingress-nginx role, up to 10 workers, none at start.
        if on.contains(&"ingressNginx") {
            out.add(
                crate::rules::INGRESS_WITHOUT_INITIAL_WORKERS,
                node_groups.path(),
                "empty, so only the implicit md0 (minReplicas 0) runs ingress-nginx: the cluster starts without \
                 workers. Add a node group with roles [ingress-nginx] and minReplicas >= 1.",
            );
        }
        return Ok(());
    };
    if groups.iter().all(|group| group.max < 1) {
        out.add(crate::rules::ADDONS_WITHOUT_WORKERS,
            node_groups.path(),
            format!(
                "every node group has maxReplicas 0, so no worker ever runs the enabled addons ({}). Raise \
                 maxReplicas of a node group, or disable them.",
                on.join(", ")
            ),
        );
        return Ok(());
    }
    if !on.contains(&"ingressNginx") {
        return Ok(());
    }
    let ingress: Vec<&Group<'_>> = groups
        .iter()
        .filter(|group| group.max >= 1 && group.roles.contains(&INGRESS_ROLE))
        .collect();
    let flag = addons.at("ingressNginx.enabled")?;
    if ingress.is_empty() {
        out.add(crate::rules::INGRESS_WITHOUT_ROLE,
            flag.path(),
            "ingress-nginx runs only on nodes with role ingress-nginx, and no node group with maxReplicas >= 1 has \
             it, so the controller never runs. Add ingress-nginx to the roles of a node group.",
        );
    } else if let Some(first) = ingress.first()
        && ingress.iter().all(|group| group.min < 1)
    {
        out.add(
            crate::rules::INGRESS_WITHOUT_INITIAL_WORKERS,
            first.field.field("minReplicas")?.path(),
            "0 in every node group with role ingress-nginx: the cluster starts without an ingress node. Set \
             minReplicas >= 1 on one of them.",
        );
    }
    Ok(())
}

/// v1.5 ([`Fact::Md0Default`]; v1.5.4's `values.yaml` 93–104,
/// `cluster.yaml` 599): the chart merges its default md0 (`roles:
/// [ingress-nginx]`) into any `nodeGroups` and starts two machines in every
/// group whatever `minReplicas` and `maxReplicas` say. Only md0's `roles` written without ingress-nginx, while no other
/// group has it, leaves the controller without a node.
fn workers_v1_5_4(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let addons = spec.field("addons")?;
    if !enabled(&addons, "ingressNginx")? {
        return Ok(());
    }
    let mut md0_roles = None;
    for (name, group) in spec.field("nodeGroups")?.entries()? {
        let roles = group.field("roles")?;
        let has_role = roles.is_present() && {
            let mut has_role = false;
            for role in roles.items()? {
                has_role |= role.string()? == Some(INGRESS_ROLE);
            }
            has_role
        };
        if name == V1_5_DEFAULT_GROUP {
            md0_roles = Some((roles.is_present(), has_role));
        } else if has_role {
            return Ok(());
        }
    }
    if md0_roles == Some((true, false)) {
        out.add(crate::rules::INGRESS_WITHOUT_ROLE,
            addons.at("ingressNginx.enabled")?.path(),
            "ingress-nginx runs only on nodes with role ingress-nginx, and no node group has it (md0's roles replace \
             the chart's default, which has it), so the controller never runs. Add ingress-nginx to the roles of a \
             node group.",
        );
    }
    Ok(())
}

/// The group v1.5's `values.yaml` always holds, and the instance type it
/// gives it.
const V1_5_DEFAULT_GROUP: &str = "md0";
const V1_5_DEFAULT_INSTANCE_TYPE: &str = "u1.medium";

/// Per node group: `ephemeralStorage` (removed) and half-set `resources`
/// (`cluster.yaml`).
pub fn node_groups(
    spec: &Field<'_>,
    release: Release,
    out: &mut Findings,
) -> Result<(), FieldError> {
    for (name, group) in spec.field("nodeGroups")?.entries()? {
        // v1.5 merges its default md0 into a user's md0: an instance type
        // left out is u1.medium there.
        let default_instance_type = if release.has(Fact::Md0Default) && name == V1_5_DEFAULT_GROUP {
            V1_5_DEFAULT_INSTANCE_TYPE
        } else {
            ""
        };
        skip_wrong_types(node_group(
            name,
            &group,
            default_instance_type,
            release,
            out,
        ));
    }
    Ok(())
}

fn node_group(
    name: &str,
    group: &Field<'_>,
    default_instance_type: &str,
    release: Release,
    out: &mut Findings,
) -> Result<(), FieldError> {
    // v1.5.2 added the check of half-set resources, and the skip of the
    // instance-type lookup for a group sized by both ([`Fact::NodeGroupResources`]).
    let sized_skips_lookup = release.has(Fact::NodeGroupResources);
    if sized_skips_lookup {
        skip_wrong_types(half_set_resources(name, group, default_instance_type, out));
    }
    if release.has(Fact::PodCpu) {
        skip_wrong_types(pod_cpu(name, group, default_instance_type, out));
    }
    skip_wrong_types(crate::instance_types::node_group(
        group,
        default_instance_type,
        sized_skips_lookup,
        out,
    ));
    skip_wrong_types(kubelet::check(name, group, default_instance_type, out));
    let ephemeral = group.field("ephemeralStorage")?;
    if ephemeral.is_present() {
        out.add(
            crate::rules::EPHEMERAL_STORAGE,
            ephemeral.path(),
            format!(
                "nodeGroup {name:?}: ephemeralStorage is no longer supported and should have been automatically \
                 migrated to diskSize by platform migration 41 (the chart fails to render). Move the size to \
                 diskSize and remove ephemeralStorage."
            ),
        );
    }
    Ok(())
}

/// `$group.instanceType` as the templates test it: the key's truthiness, or
/// `default_instance_type` when the key is absent.
fn has_instance_type(group: &Field<'_>, default_instance_type: &str) -> Result<bool, FieldError> {
    let instance_type = group.field("instanceType")?;
    Ok(if instance_type.is_present() {
        truthy(instance_type.json())
    } else {
        !default_instance_type.is_empty()
    })
}

/// `podCpuLimit` and `podCpuRequest` ([`Fact::PodCpu`]; `cluster.yaml`
/// 574–629, `kubernetes-nodes/templates/nodegroup.yaml` 234–289 of
/// v1.7.0-rc.3c780acd): neither on a group its instance type sizes, neither
/// negative, a zero limit only beside a request, a zero request only beside
/// a zero limit, the request at most the limit. Each is present unless
/// absent or null, and compared as `cozy-lib.resources.toFloat` reads it.
fn pod_cpu(
    name: &str,
    group: &Field<'_>,
    default_instance_type: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let [limit, request] = group.members(["podCpuLimit", "podCpuRequest"])?;
    let (limit_cpu, request_cpu) = (cpu(&limit), cpu(&request));
    let [cpu_set, memory_set] = group.at("resources")?.members(["cpu", "memory"])?;
    let typed = has_instance_type(group, default_instance_type)?
        && !(truthy(cpu_set.json()) && truthy(memory_set.json()));
    let mut fails = |field: &Field<'_>, problem: String| {
        out.add(
            crate::rules::POD_CPU,
            field.path(),
            format!("nodeGroup {name}: {problem} (the chart fails to render)."),
        );
    };
    let zero = |value: Decimal| value.compare(Decimal::int(0));
    let pair = [
        ("podCpuLimit", &limit, limit_cpu),
        ("podCpuRequest", &request, request_cpu),
    ];
    let present = |field: &Field<'_>| !matches!(field.json(), None | Some(Value::Null));
    for (key, field, value) in pair {
        if typed && present(field) {
            fails(
                field,
                format!(
                    "{key} cannot be combined with instanceType sizing, which KubeVirt refuses; set both \
                     resources.cpu and resources.memory, or drop {key}"
                ),
            );
        }
        if value.and_then(zero) == Some(Ordering::Less) {
            fails(field, format!("{key} must not be negative"));
        }
    }
    match (limit_cpu, request_cpu) {
        (Some(limit_cpu), _) if !present(&request) && zero(limit_cpu) == Some(Ordering::Equal) => {
            fails(
                &limit,
                "podCpuLimit 0 needs podCpuRequest 0 beside it, or the worker's Pod is refused"
                    .to_owned(),
            )
        }
        (Some(limit_cpu), Some(request_cpu)) => {
            if zero(request_cpu) == Some(Ordering::Equal)
                && zero(limit_cpu) != Some(Ordering::Equal)
            {
                fails(
                    &request,
                    "podCpuRequest 0 beside a podCpuLimit becomes the limit in KubeVirt; give it a non-zero \
                     value, or drop it"
                        .to_owned(),
                );
            }
            if request_cpu.compare(limit_cpu) == Some(Ordering::Greater) {
                fails(&request, "podCpuRequest exceeds podCpuLimit".to_owned());
            }
        }
        _ => {}
    }
    Ok(())
}

/// A CPU quantity as `cozy-lib.resources.toFloat` reads it, exactly (the
/// floats it compares order as these do: [`to_decimal`]); `None` when
/// absent or null, of a type the schema refuses (values-schema's), or where
/// no float holds it exactly.
fn cpu(field: &Field<'_>) -> Option<Decimal> {
    match field.json()? {
        Value::Number(number) => number.as_i64().map(Decimal::int),
        Value::String(text) => to_decimal(text),
        _ => None,
    }
}

/// `cluster.yaml` (525), `kubernetes-nodes/templates/nodegroup.yaml`
/// (182): one of `resources.cpu`, `resources.memory` with an instance type
/// (`default_instance_type` when the key is absent).
fn half_set_resources(
    name: &str,
    group: &Field<'_>,
    default_instance_type: &str,
    out: &mut Findings,
) -> Result<(), FieldError> {
    let instance_type = has_instance_type(group, default_instance_type)?;
    let resources = group.field("resources")?;
    let [cpu, memory] = resources.members(["cpu", "memory"])?;
    let (cpu, memory) = (truthy(cpu.json()), truthy(memory.json()));
    if instance_type && cpu != memory {
        out.add(
            crate::rules::NODE_GROUP_RESOURCES,
            resources.path(),
            format!(
                "nodeGroup {name}: set both resources.cpu and resources.memory, or neither (the chart fails to \
                 render; KubeVirt cannot override one of them on an instancetype)."
            ),
        );
    }
    Ok(())
}

/// The chart default of a KubernetesNodes pool's `instanceType`
/// (`apps/kubernetes-nodes/values.yaml`).
const NODES_INSTANCE_TYPE: &str = "u1.medium";

/// A KubernetesNodes pool (`apps/kubernetes-nodes/templates/nodegroup.yaml`,
/// the node-group code of `cluster.yaml` over the pool's own values):
/// half-set resources, kubelet reservations, `maxUnhealthy` and the
/// durations ([`Fact::PositiveDuration`]). `pool` is
/// the pool's name as the messages call it.
pub fn nodes_pool(spec: &Field<'_>, pool: &str, release: Release, out: &mut Findings) {
    skip_wrong_types(half_set_resources(pool, spec, NODES_INSTANCE_TYPE, out));
    skip_wrong_types(crate::instance_types::node_group(
        spec,
        NODES_INSTANCE_TYPE,
        true,
        out,
    ));
    skip_wrong_types(kubelet::check(pool, spec, NODES_INSTANCE_TYPE, out));
    skip_wrong_types(nodes_max_unhealthy(spec, out));
    if release.has(Fact::PodCpu) {
        skip_wrong_types(pod_cpu(pool, spec, NODES_INSTANCE_TYPE, out));
    }
    if release.has(Fact::PositiveDuration) {
        durations(spec, POOL_DURATIONS, out);
    }
}

/// `nodegroup.yaml` (473, 479): the pool's `maxUnhealthy` (default `50%`).
fn nodes_max_unhealthy(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let field = spec.field("maxUnhealthy")?;
    if let Some(value) = field.string()?
        && !is_max_unhealthy(value)
    {
        out.add(
            crate::rules::MAX_UNHEALTHY,
            field.path(),
            max_unhealthy_message(&field.path(), value),
        );
    }
    Ok(())
}

/// Whether `value` is what the MachineHealthCheck template accepts.
fn is_max_unhealthy(value: &str) -> bool {
    let digits = value.strip_suffix('%').unwrap_or(value);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `maxUnhealthy`, per group or cluster-wide (`cluster.yaml`, the
/// MachineHealthCheck of each group).
pub fn max_unhealthy(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let global = spec.at("nodeHealthCheck.maxUnhealthy")?;
    let mut global_used = true;
    let entries = spec.field("nodeGroups")?.entries()?;
    if !entries.is_empty() {
        global_used = false;
        for (_, group) in entries {
            let Ok(own) = group.field("maxUnhealthy") else {
                continue;
            };
            if !own.is_present() {
                global_used = true;
                continue;
            }
            if let Ok(Some(value)) = own.string()
                && !is_max_unhealthy(value)
            {
                out.add(
                    crate::rules::MAX_UNHEALTHY,
                    own.path(),
                    max_unhealthy_message(&own.path(), value),
                );
            }
        }
    }
    if global_used
        && let Some(value) = global.string()?
        && !is_max_unhealthy(value)
    {
        out.add(
            crate::rules::MAX_UNHEALTHY,
            global.path(),
            max_unhealthy_message(&global.path(), value),
        );
    }
    Ok(())
}

fn max_unhealthy_message(path: &FieldPath, value: &str) -> String {
    let source = path.to_string();
    let source = source.strip_prefix("spec.").unwrap_or(&source);
    format!(
        "{source} must be a bare integer (e.g. 0, 1) or an integer percentage (e.g. 50%), got {value:?} (the chart \
         fails to render)."
    )
}

/// `controlPlane.apiServer.extraVolumes` and `extraVolumeMounts`
/// (`cluster.yaml`). The OIDC volume name `authentication-config` is
/// oidc-config's.
pub fn extra_volumes(spec: &Field<'_>, out: &mut Findings) -> Result<(), FieldError> {
    let api_server = spec.at("controlPlane.apiServer")?;
    let [volumes, mounts] = api_server.members(["extraVolumes", "extraVolumeMounts"])?;
    let mut names: Vec<String> = Vec::new();
    for volume in volumes.items()? {
        let Ok(name_field) = volume.field("name") else {
            continue;
        };
        let name = crate::values::default_empty_to_string(name_field.json());
        let index = volume.path();
        if name.is_empty() {
            out.add(
                crate::rules::EXTRA_VOLUMES,
                name_field.path(),
                format!(
                    "{}: every volume must set a non-empty name (the chart fails to render).",
                    trim_spec(&index)
                ),
            );
            continue;
        }
        if RESERVED_VOLUMES.contains(&name.as_str()) {
            out.add(
                crate::rules::EXTRA_VOLUMES,
                name_field.path(),
                format!(
                    "controlPlane.apiServer.extraVolumes: volume name {name:?} is reserved by the chart for the talos \
                     control-plane secrets — rename your volume (the chart fails to render)."
                ),
            );
        } else if names.contains(&name) {
            out.add(
                crate::rules::EXTRA_VOLUMES,
                name_field.path(),
                format!(
                    "controlPlane.apiServer.extraVolumes: duplicate volume name {name:?} — each extra volume must \
                     have a unique name (the chart fails to render)."
                ),
            );
        }
        // In key order: an object's entries come so (serde_json's map).
        let sources: Vec<&str> = volume
            .entries()?
            .into_iter()
            .filter(|(key, field)| *key != "name" && field.is_present())
            .map(|(key, _)| key)
            .collect();
        if sources.len() != 1 {
            out.add(
                crate::rules::EXTRA_VOLUMES,
                index.clone(),
                format!(
                    "controlPlane.apiServer.extraVolumes: volume {name:?} must declare exactly one volume source, \
                     got {} ([{}]) (the chart fails to render). Use one configMap or secret.",
                    sources.len(),
                    sources.join(" ")
                ),
            );
        }
        for source in sources {
            if !VOLUME_SOURCES.contains(&source) {
                out.add(
                    crate::rules::EXTRA_VOLUMES,
                    index.key(source),
                    format!(
                        "controlPlane.apiServer.extraVolumes: volume {name:?} uses a {source:?} source, which is not \
                         permitted on a management-cluster control-plane pod — only configMap and secret sources are \
                         allowed (the chart fails to render)."
                    ),
                );
            }
        }
        names.push(name);
    }
    for mount in mounts.items()? {
        let Ok(name_field) = mount.field("name") else {
            continue;
        };
        let name = crate::values::default_empty_to_string(name_field.json());
        if name.is_empty() {
            out.add(
                crate::rules::EXTRA_VOLUME_MOUNTS,
                name_field.path(),
                format!(
                    "{}: every mount must set a non-empty name (the chart fails to render).",
                    trim_spec(&mount.path())
                ),
            );
        } else if !names.contains(&name) {
            out.add(
                crate::rules::EXTRA_VOLUME_MOUNTS,
                name_field.path(),
                format!(
                    "controlPlane.apiServer.extraVolumeMounts: mount {name:?} references no volume declared in \
                     controlPlane.apiServer.extraVolumes — the chart-managed talos volumes cannot be mounted (the \
                     chart fails to render)."
                ),
            );
        }
    }
    Ok(())
}

/// A path without its leading `spec.`, as the chart names values.
fn trim_spec(path: &FieldPath) -> String {
    let text = path.to_string();
    text.strip_prefix("spec.").unwrap_or(&text).to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minors() {
        assert_eq!(minor("v1.30"), Some(30));
        assert_eq!(minor("v1.35"), Some(35));
        assert_eq!(minor("1.33"), None);
        assert_eq!(minor("v1."), None);
        assert_eq!(minor("v1.3x"), None);
    }

    #[test]
    fn max_unhealthy_values() {
        for ok in ["0", "1", "50%", "0%", "100%"] {
            assert!(is_max_unhealthy(ok), "{ok}");
        }
        for bad in ["", "%", "50.5%", "-1", "50 %", "x"] {
            assert!(!is_max_unhealthy(bad), "{bad}");
        }
    }

    /// The values the chart's regular expression takes and refuses (held to
    /// Helm by the oracle's name probes and the cases).
    #[test]
    fn positive_duration_values() {
        for ok in ["30m", "1h30m", "20m0s", "1h0m0s", "99999s", "5m00000s"] {
            assert!(is_positive_duration(ok), "{ok}");
        }
        for bad in [
            "", "30", "0m", "05m", "-5m", "1.5h", "100000s", "1h1m1s1s", "1d", "30M", "30m\n",
            " 30m", "1h 30m", "m",
        ] {
            assert!(!is_positive_duration(bad), "{bad}");
        }
    }
}
