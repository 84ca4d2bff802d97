//! The static checks: everything cozystack-api's `validateSecurityGroup`
//! checks, with its field paths and messages (apimachinery's
//! `<path>: Invalid value: "<v>": <detail>` form), and what selects nothing
//! although cozystack-api accepts it.
//!
//! One walk over the object does both, and collects the references that
//! passed, for the existence checks that follow. What cozystack-api
//! accepts is a [`Finding`]: a warning, or a rejection when the setting
//! `deny` lists it, and never more than a warning for a reference the
//! stored object already had (on UPDATE).

use std::collections::HashMap;

use shared::apps::{APP_KINDS, APPS_GROUP, app_kind_by_plural};
use shared::lookup::{Cluster, LookupError};
use shared::validators::{
    check_label_value, check_qualified_name, is_cidr_or_ip, is_cilium_protocol,
    is_dns1123_subdomain, is_reserved_cilium_entity, port_errors,
};
use shared::{Field, FieldError, Findings};

use crate::kinds;
use crate::rules;
use crate::settings::Settings;

/// A reference to an application that passed the static checks.
#[derive(Debug, Clone, PartialEq)]
pub struct AppTarget<'a> {
    /// The reference (`spec.attachments[0]`).
    pub reference: Field<'a>,
    /// The list it is in (`spec.attachments`).
    pub list: Field<'a>,
    pub kind: &'a str,
    pub name: &'a str,
    /// An attachment rather than a `fromApp`/`toApp` peer.
    pub attachment: bool,
}

/// A `fromSG`/`toSG` peer that passed the static checks.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupTarget<'a> {
    pub reference: Field<'a>,
    pub list: Field<'a>,
    pub name: &'a str,
}

/// `(apiGroup, kind, name)` of an application reference.
type AppIdentity<'a> = (&'a str, &'a str, &'a str);

/// What the walk found.
#[derive(Debug, Default)]
pub struct Targets<'a> {
    pub apps: Vec<AppTarget<'a>>,
    pub groups: Vec<GroupTarget<'a>>,
}

/// apimachinery's `field.Invalid` body.
fn invalid(value: &str, detail: &str) -> String {
    format!("Invalid value: {value:?}: {detail}")
}

/// apimachinery's `field.Required` body.
fn required(detail: &str) -> String {
    format!("Required value: {detail}")
}

const RESERVED: &str = "must not name a reserved Cilium entity";

/// apimachinery's `IsQualifiedName` of the membership label key
/// `securitygroup.sdn.cozystack.io/<name>`, which cozystack-api checks for
/// the group's own name and for every `fromSG`/`toSG` peer, one field error
/// per message. The prefix is valid, so only the name part can fail; a `/`
/// in it makes three parts.
fn check_membership_name(name: &str) -> Result<(), Vec<String>> {
    check_qualified_name(&format!("securitygroup.sdn.cozystack.io/{name}"))
}

/// A string, `""` when absent or null (Go's zero value).
fn text<'a>(field: &Field<'a>) -> Result<&'a str, FieldError> {
    Ok(field.string()?.unwrap_or_default())
}

/// Levenshtein distance of two short ASCII-case-folded strings (a kind is
/// at most 63 characters; this runs only on the rejection path).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous
                .get(j)
                .map_or(usize::MAX, |d| d + usize::from(ca != cb));
            let delete = previous.get(j + 1).map_or(usize::MAX, |d| d + 1);
            let insert = current.get(j).map_or(usize::MAX, |d| d + 1);
            current.push(substitute.min(delete).min(insert));
        }
        previous = current;
    }
    previous.last().copied().unwrap_or_default()
}

/// A near miss of `kind` among the built-in kinds (case, plural, a typo or
/// two), as `did you mean "Postgres"?`, or `None`.
fn suggestion(kind: &str) -> Option<String> {
    app_kind_by_plural(&kind.to_ascii_lowercase())
        .map(|app| app.kind)
        .or_else(|| {
            APP_KINDS
                .iter()
                .map(|app| (edit_distance(app.kind, kind), app.kind))
                .filter(|(distance, _)| *distance <= 2)
                .min_by_key(|(distance, _)| *distance)
                .map(|(_, known)| known)
        })
        .map(|known| format!("did you mean {known:?}?"))
}

/// How a kind outside the built-in catalogue and `extraKinds` was judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KindBasis {
    /// No ApplicationDefinition of the cluster serves it.
    Cluster,
    /// Not looked up (`ignore: [missing-target]`).
    Static,
}

/// What to say about a kind no application has: what is wrong, the near
/// miss if any, and what to do. Short enough to survive as a warning.
fn unknown_kind(kind: &str, basis: KindBasis) -> String {
    let hint = suggestion(kind)
        .map(|s| format!("{s} "))
        .unwrap_or_default();
    let tail = match basis {
        KindBasis::Cluster => "no ApplicationDefinition serves it either; kinds are case-sensitive",
        KindBasis::Static => {
            "kinds are case-sensitive; add a kind this cluster serves to the setting extraKinds"
        }
    };
    format!(
        "{kind:?} is not a Cozystack application kind, so the reference selects no pods; {hint}{tail}"
    )
}

/// The group that identifies an application: an empty `apiGroup` is
/// `apps.cozystack.io` (cozystack-api canonicalises it).
fn canonical_group(group: &str) -> &str {
    if group.is_empty() { APPS_GROUP } else { group }
}

/// One walk over an object, recording findings.
pub struct Walk<'r, 'a> {
    found: &'r mut Findings,
    settings: &'r Settings,
    /// Where the ApplicationDefinitions are listed, when a kind needs it.
    cluster: &'r dyn Cluster,
    /// The references the stored object had (empty on CREATE).
    known: &'r Known<'a>,
    /// The kinds the cluster's ApplicationDefinitions serve, listed at the
    /// first kind outside the catalogue, at most once.
    served: Option<Result<Vec<String>, LookupError>>,
    pub targets: Targets<'a>,
}

impl<'r, 'a> Walk<'r, 'a> {
    pub fn new(
        found: &'r mut Findings,
        settings: &'r Settings,
        cluster: &'r dyn Cluster,
        known: &'r Known<'a>,
    ) -> Self {
        Self {
            found,
            settings,
            cluster,
            known,
            served: None,
            targets: Targets::default(),
        }
    }

    /// Whether the cluster serves `kind`, a kind outside the catalogue and
    /// `extraKinds`; records the finding, or the warning that it could not
    /// be checked, when not.
    fn kind_served(&mut self, field: &Field<'a>, kind: &str, stored: bool) -> bool {
        if !self.settings.looks_up() {
            let message = unknown_kind(kind, KindBasis::Static);
            self.found
                .add_known(stored, rules::UNKNOWN_KIND, field.path(), message);
            return false;
        }
        let cluster = self.cluster;
        match self.served.get_or_insert_with(|| kinds::served(cluster)) {
            Ok(served) if served.iter().any(|k| k == kind) => true,
            Ok(_) => {
                let message = unknown_kind(kind, KindBasis::Cluster);
                self.found
                    .add_known(stored, rules::UNKNOWN_KIND, field.path(), message);
                false
            }
            Err(error) => {
                let hint = suggestion(kind)
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default();
                let message = format!(
                    "kind not checked: {kind:?} is not built in{hint} and cannot list the \
                     ApplicationDefinitions: {error}"
                );
                self.found
                    .add(crate::rules::EXISTENCE_NOT_CHECKED, field.path(), message);
                false
            }
        }
    }

    /// The group's own name (`metadata.name`): it becomes the membership
    /// label key, and the backing CiliumNetworkPolicy must be able to carry
    /// it.
    pub fn name(&mut self, field: &Field<'a>) -> Result<(), FieldError> {
        // cozystack-api's storage does not generate names (it never calls
        // BeforeCreate), so `generateName` alone leaves the name empty, which
        // `IsQualifiedName` reports twice (empty, and not matching).
        let name = text(field)?;
        if let Err(messages) = check_membership_name(name) {
            for message in messages {
                self.found.add(
                    crate::rules::INVALID_NAME,
                    field.path(),
                    invalid(name, &message),
                );
            }
        } else if !is_dns1123_subdomain(name) {
            self.found.add(crate::rules::INVALID_NAME,
                field.path(),
                format!(
                    "{name:?} is a valid membership label but not an object name: the backing \
                     CiliumNetworkPolicy needs a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.'), \
                     and its creation would fail after cozystack-api accepted the group"
                ),
            );
        }
        Ok(())
    }

    /// The spec: attachments, ingress and egress rules, the legacy shape.
    pub fn spec(&mut self, spec: &Field<'a>) -> Result<(), FieldError> {
        let [target_ref, attachments, ingress, egress] =
            spec.members(["targetRef", "attachments", "ingress", "egress"])?;
        self.legacy_target_ref(&target_ref);
        let attached: Vec<Field<'a>> = attachments.items()?.collect();
        // The first attachment of each application, its group as written (a
        // `HashMap` weighs less in this module than a `BTreeMap`).
        let mut seen: HashMap<AppIdentity<'a>, (&Field<'a>, &'a str)> = HashMap::new();
        for reference in &attached {
            let Some((group, kind, name)) = self.app_reference(reference)? else {
                continue;
            };
            if let Some((first, first_group)) = seen.get(&(canonical_group(group), kind, name)) {
                let note = if *first_group == group {
                    ""
                } else {
                    "; an empty apiGroup means apps.cozystack.io"
                };
                let message = format!(
                    "duplicates {} ({kind} {name:?}{note}); remove one of them",
                    first.path()
                );
                let stored = self.known.duplicates_attachment(group, kind, name);
                self.found.add_known(
                    stored,
                    rules::DUPLICATE_ATTACHMENT,
                    reference.path(),
                    message,
                );
                continue;
            }
            self.targets.apps.push(AppTarget {
                reference: reference.clone(),
                list: attachments.clone(),
                kind,
                name,
                attachment: true,
            });
            seen.insert((canonical_group(group), kind, name), (reference, group));
        }
        let mut rules = 0;
        for rule in ingress.items()? {
            let [apps, groups, cidrs, ports] =
                rule.members(["fromApp", "fromSG", "fromCIDR", "toPorts"])?;
            self.app_peers(&apps)?;
            self.group_peers(&groups)?;
            self.cidrs(&cidrs)?;
            self.ports(&ports)?;
            rules += 1;
        }
        for rule in egress.items()? {
            let [apps, groups, cidrs, ports, fqdns] =
                rule.members(["toApp", "toSG", "toCIDR", "toPorts", "toFQDNs"])?;
            self.app_peers(&apps)?;
            self.group_peers(&groups)?;
            self.cidrs(&cidrs)?;
            self.ports(&ports)?;
            self.fqdns(&fqdns)?;
            rules += 1;
        }
        if !attached.is_empty() && rules == 0 {
            self.found.add(
                crate::rules::NO_RULES,
                spec.path(),
                "no ingress or egress rules: members are labelled but not isolated \
                 (Cozystack 1.6 has no default deny)",
            );
        }
        Ok(())
    }

    /// `spec.targetRef`, the shape of the feature branch before release:
    /// cozystack-api drops the unknown field, so the group attaches to
    /// nothing.
    fn legacy_target_ref(&mut self, target: &Field<'a>) {
        if !target.is_present() {
            return;
        }
        // Shown as the user wrote it when it can be read; the finding is
        // about the field's presence, whatever it holds.
        let value = |key: &str, placeholder: &'static str| -> &'a str {
            target
                .field(key)
                .and_then(|f| f.string())
                .ok()
                .flatten()
                .filter(|v| !v.is_empty())
                .unwrap_or(placeholder)
        };
        let group = target
            .field("apiGroup")
            .and_then(|f| f.string())
            .ok()
            .flatten()
            .filter(|g| !g.is_empty())
            .map(|g| format!("apiGroup: {g}, "))
            .unwrap_or_default();
        self.found.add(
            crate::rules::LEGACY_TARGET_REF,
            target.path(),
            format!(
                "targetRef is the pre-release shape and SecurityGroup v1alpha1 has no such field: \
                 cozystack-api drops it and the group attaches to nothing. Write \
                 spec.attachments: [{{{group}kind: {}, name: {}}}] instead",
                value("kind", "<Kind>"),
                value("name", "<name>"),
            ),
        );
    }

    /// An `ApplicationReference`: cozystack-api's `validateAppRef`, then
    /// what selects nothing. Returns `(apiGroup, kind, name)` when the
    /// reference passed everything.
    fn app_reference(
        &mut self,
        reference: &Field<'a>,
    ) -> Result<Option<AppIdentity<'a>>, FieldError> {
        let [group_field, kind_field, name_field] =
            reference.members(["apiGroup", "kind", "name"])?;
        let (group, kind, name) = (text(&group_field)?, text(&kind_field)?, text(&name_field)?);
        let mut violations = Vec::new();
        if kind.is_empty() {
            violations.push((&kind_field, required("must reference an application kind")));
        }
        if name.is_empty() {
            violations.push((&name_field, required("must reference an application name")));
        }
        let mut label_valid = [true; 3];
        for (valid, (field, value)) in label_valid.iter_mut().zip([
            (&group_field, &group),
            (&kind_field, &kind),
            (&name_field, &name),
        ]) {
            if let Err(message) = check_label_value(value) {
                violations.push((field, invalid(value, &message)));
                *valid = false;
            }
        }
        if is_reserved_cilium_entity(name) {
            violations.push((&name_field, invalid(name, RESERVED)));
        }
        let mut passed = violations.is_empty();
        for (field, message) in violations {
            self.found
                .add(crate::rules::INVALID_APP_REFERENCE, field.path(), message);
        }
        let stored = self.known.has_reference(group, kind, name);
        let [group_valid, kind_valid, _] = label_valid;
        if group_valid && !group.is_empty() && group != APPS_GROUP {
            let message = format!(
                "{group:?} selects no pods: SecurityGroups attach only to applications of \
                 apps.cozystack.io; remove apiGroup or set it to apps.cozystack.io"
            );
            self.found.add_known(
                stored,
                rules::FOREIGN_API_GROUP,
                group_field.path(),
                message,
            );
            passed = false;
        }
        if kind_valid
            && !kind.is_empty()
            && !self.settings.knows_kind(kind)
            && !self.kind_served(&kind_field, kind, stored)
        {
            passed = false;
        }
        Ok(passed.then_some((group, kind, name)))
    }

    /// `fromApp` / `toApp`.
    fn app_peers(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for reference in list.items()? {
            if let Some((_, kind, name)) = self.app_reference(&reference)? {
                self.targets.apps.push(AppTarget {
                    reference: reference.clone(),
                    list: list.clone(),
                    kind,
                    name,
                    attachment: false,
                });
            }
        }
        Ok(())
    }

    /// `fromSG` / `toSG`: cozystack-api's `validateSGNames`, then names no
    /// SecurityGroup can have.
    fn group_peers(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for peer in list.items()? {
            let name = text(&peer)?;
            if name.is_empty() {
                self.found.add(
                    crate::rules::INVALID_GROUP_PEER,
                    peer.path(),
                    required("must name a SecurityGroup"),
                );
            } else if is_reserved_cilium_entity(name) {
                self.found.add(
                    crate::rules::INVALID_GROUP_PEER,
                    peer.path(),
                    invalid(name, RESERVED),
                );
            } else if let Err(messages) = check_membership_name(name) {
                for message in messages {
                    self.found.add(
                        crate::rules::INVALID_GROUP_PEER,
                        peer.path(),
                        invalid(name, &message),
                    );
                }
            } else if !is_dns1123_subdomain(name) {
                let message = format!(
                    "{name:?} cannot name a SecurityGroup (names are lowercase RFC 1123 \
                     subdomains), so this peer matches no pods; use the name kubectl get \
                     securitygroups shows"
                );
                let stored = self.known.has_group(name);
                self.found
                    .add_known(stored, rules::IMPOSSIBLE_GROUP_NAME, peer.path(), message);
            } else {
                self.targets.groups.push(GroupTarget {
                    reference: peer.clone(),
                    list: list.clone(),
                    name,
                });
            }
        }
        Ok(())
    }

    /// `fromCIDR` / `toCIDR`: a prefix or a bare address, as Go's `netip`
    /// reads them.
    fn cidrs(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for cidr in list.items()? {
            let value = text(&cidr)?;
            if !is_cidr_or_ip(value) {
                self.found.add(
                    crate::rules::INVALID_CIDR,
                    cidr.path(),
                    invalid(value, "must be a valid CIDR or IP address"),
                );
            }
        }
        Ok(())
    }

    /// `toPorts[].ports[]`: port numbers or names, protocols.
    fn ports(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for rule in list.items()? {
            for port in rule.field("ports")?.items()? {
                let [port_field, protocol_field] = port.members(["port", "protocol"])?;
                let number = text(&port_field)?;
                for message in port_errors(number) {
                    self.found.add(
                        crate::rules::INVALID_PORT,
                        port_field.path(),
                        invalid(number, message),
                    );
                }
                let protocol = text(&protocol_field)?;
                if !protocol.is_empty() && !is_cilium_protocol(protocol) {
                    self.found.add(crate::rules::INVALID_PORT,
                        protocol_field.path(),
                        format!(
                            "Unsupported value: {protocol:?}: supported values: \"TCP\", \"UDP\", \"SCTP\", \"ANY\""
                        ),
                    );
                }
            }
        }
        Ok(())
    }

    /// `toFQDNs`: each selector needs a name or a pattern.
    fn fqdns(&mut self, list: &Field<'a>) -> Result<(), FieldError> {
        for selector in list.items()? {
            let [name, pattern] = selector.members(["matchName", "matchPattern"])?;
            let (name, pattern) = (text(&name)?, text(&pattern)?);
            if name.is_empty() && pattern.is_empty() {
                self.found.add(
                    crate::rules::INVALID_FQDN,
                    selector.path(),
                    required("must set matchName or matchPattern"),
                );
            }
        }
        Ok(())
    }
}

/// The references an object already had: applications as `(apiGroup,
/// kind, name)` (an empty `apiGroup` as `apps.cozystack.io`), attachments
/// apart, and SecurityGroup names. Read leniently: the old object is the
/// stored one, and a part that cannot be read only means more gets checked.
/// Every reference of a long list is one hash lookup rather than a scan.
#[derive(Debug, Default)]
pub struct Known<'a> {
    /// How often each reference occurs. One map of one key type for all
    /// four kinds of reference, so that the module carries one copy of the
    /// hash table's code (a sort and binary search per kind cost 10 KB).
    counts: HashMap<Stored<'a>, u32>,
}

/// A reference the stored object makes, as [`Known`] counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Stored<'a> {
    /// An application, in any role.
    App(AppIdentity<'a>),
    /// `(kind, name)` of an application, in any role.
    Name(&'a str, &'a str),
    /// An application in `spec.attachments`.
    Attachment(AppIdentity<'a>),
    /// A SecurityGroup, in `fromSG` or `toSG`.
    Group(&'a str),
}

impl<'a> Known<'a> {
    pub fn read(object: &Field<'a>) -> Self {
        let list = |parent: &Field<'a>, key: &str| -> Vec<Field<'a>> {
            parent
                .field(key)
                .and_then(|f| Ok(f.items()?.collect()))
                .unwrap_or_default()
        };
        let string = |field: &Field<'a>| field.string().ok().flatten().unwrap_or_default();
        let member = |parent: &Field<'a>, key: &str| {
            parent.field(key).map(|f| string(&f)).unwrap_or_default()
        };
        let identity = |reference: &Field<'a>| {
            (
                canonical_group(member(reference, "apiGroup")),
                member(reference, "kind"),
                member(reference, "name"),
            )
        };
        let mut known = Known::default();
        let Ok(spec) = object.field("spec") else {
            return known;
        };
        let app = |known: &mut Known<'a>, app: AppIdentity<'a>| {
            let (_, kind, name) = app;
            known.add(Stored::App(app));
            known.add(Stored::Name(kind, name));
        };
        for reference in list(&spec, "attachments") {
            let attached = identity(&reference);
            known.add(Stored::Attachment(attached));
            app(&mut known, attached);
        }
        for (rules, apps, groups) in [
            ("ingress", "fromApp", "fromSG"),
            ("egress", "toApp", "toSG"),
        ] {
            for rule in list(&spec, rules) {
                for reference in list(&rule, apps) {
                    app(&mut known, identity(&reference));
                }
                for group in list(&rule, groups) {
                    known.add(Stored::Group(string(&group)));
                }
            }
        }
        known
    }

    fn add(&mut self, reference: Stored<'a>) {
        let count = self.counts.entry(reference).or_default();
        *count = count.saturating_add(1);
    }

    fn count(&self, reference: Stored<'a>) -> u32 {
        self.counts.get(&reference).copied().unwrap_or_default()
    }

    /// An application `(kind, name)` the object referred to, in any role.
    pub fn has_app(&self, kind: &str, name: &str) -> bool {
        self.count(Stored::Name(kind, name)) > 0
    }

    /// The very reference (`apiGroup` too), in any role.
    pub fn has_reference(&self, group: &str, kind: &str, name: &str) -> bool {
        self.count(Stored::App((canonical_group(group), kind, name))) > 0
    }

    /// Whether the object already attached this application twice.
    pub fn duplicates_attachment(&self, group: &str, kind: &str, name: &str) -> bool {
        self.count(Stored::Attachment((canonical_group(group), kind, name))) > 1
    }

    pub fn has_group(&self, name: &str) -> bool {
        self.count(Stored::Group(name)) > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdict on what a walk found, as `evaluate` records it.
    fn verdict(found: Findings, settings: &Settings) -> shared::Verdict {
        let mut review = shared::Review::new();
        found.record(None, &settings.deny, &settings.ignore, &mut review);
        review.verdict(shared::Refusal::Invalid)
    }

    use shared::lookup::{LIST_ALL, Offline};
    use std::cell::Cell;

    fn json(text: &str) -> shared::Value {
        serde_json::from_str(text).unwrap()
    }

    /// Answers the ApplicationDefinition list (or fails) and counts calls.
    struct Definitions {
        answer: Result<&'static str, &'static str>,
        calls: Cell<usize>,
    }

    impl Definitions {
        fn serving(answer: &'static str) -> Self {
            Self {
                answer: Ok(answer),
                calls: Cell::new(0),
            }
        }
    }

    impl Cluster for Definitions {
        fn call(&self, operation: &str, request: &[u8]) -> Result<Vec<u8>, LookupError> {
            assert_eq!(operation, LIST_ALL, "the walk only lists the definitions");
            assert_eq!(
                std::str::from_utf8(request).unwrap(),
                r#"{"api_version":"cozystack.io/v1alpha1","kind":"ApplicationDefinition","label_selector":null,"field_selector":null,"field_masks":["spec.application.kind"]}"#
            );
            self.calls.set(self.calls.get() + 1);
            self.answer
                .map(|a| a.as_bytes().to_vec())
                .map_err(|e| LookupError(e.to_owned()))
        }
    }

    const COMPUTE_PLANE: &str = r#"{"items": [{"spec": {"application": {"kind": "Postgres"}}},
        {"spec": {"application": {"kind": "ComputePlane"}}}, {"metadata": {}}]}"#;

    struct Walked {
        violations: Vec<String>,
        warnings: Vec<String>,
        apps: usize,
        groups: usize,
    }

    /// Walks `spec` (an object with a `spec`), the stored object `old`
    /// (`{}` on CREATE), against `cluster`.
    fn walk_in(spec: &str, old: &str, settings: &Settings, cluster: &dyn Cluster) -> Walked {
        let mut found = Findings::new();
        let spec = json(spec);
        let spec = Field::root(Some(&spec));
        let old = json(old);
        let known = Known::read(&Field::root(Some(&old)));
        let mut walk = Walk::new(&mut found, settings, cluster, &known);
        walk.spec(&spec.field("spec").unwrap()).unwrap();
        let (apps, groups) = (walk.targets.apps.len(), walk.targets.groups.len());
        let verdict = verdict(found, settings);
        Walked {
            violations: crate::tests::untagged(
                verdict
                    .message()
                    .map(|m| m.lines().map(str::to_owned).collect())
                    .unwrap_or_default(),
            ),
            warnings: crate::tests::untagged(verdict.warnings()),
            apps,
            groups,
        }
    }

    fn walk(spec: &str, settings: &Settings) -> (Vec<String>, Vec<String>, usize, usize) {
        let walked = walk_in(spec, "{}", settings, &Definitions::serving(COMPUTE_PLANE));
        (
            walked.violations,
            walked.warnings,
            walked.apps,
            walked.groups,
        )
    }

    fn settings(json: &str) -> Settings {
        shared::settings::check::<Settings>(json.as_bytes()).unwrap()
    }

    fn deny_all() -> Settings {
        settings(
            r#"{"deny": ["duplicate-attachment", "foreign-api-group", "impossible-group-name",
                "unknown-kind"]}"#,
        )
    }

    #[test]
    fn cozystack_messages_with_their_paths() {
        let (violations, _, apps, groups) = walk(
            r#"{"spec": {"attachments": [{"name": "db"}, {"kind": "Postgres", "name": "World"}],
                "ingress": [{"fromSG": ["cluster", "", "a/b"], "fromCIDR": ["10.0.0.0/33", "10.0.0.1"],
                             "toPorts": [{"ports": [{"port": "0"}, {"port": "443", "protocol": "ICMP"}, {"port": "+80", "protocol": "tcp"}]}]}],
                "egress": [{"toFQDNs": [{}, {"matchName": "x.example.org"}]}]}}"#,
            &Settings::default(),
        );
        assert_eq!(
            violations,
            vec![
                "spec.attachments[0].kind: Required value: must reference an application kind",
                "spec.attachments[1].name: Invalid value: \"World\": must not name a reserved Cilium entity",
                "spec.ingress[0].fromSG[0]: Invalid value: \"cluster\": must not name a reserved Cilium entity",
                "spec.ingress[0].fromSG[1]: Required value: must name a SecurityGroup",
                "spec.ingress[0].fromSG[2]: Invalid value: \"a/b\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                "spec.ingress[0].fromCIDR[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR or IP address",
                "spec.ingress[0].toPorts[0].ports[0].port: Invalid value: \"0\": port number must be between 1 and 65535",
                "spec.ingress[0].toPorts[0].ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\", \"ANY\"",
                "spec.egress[0].toFQDNs[0]: Required value: must set matchName or matchPattern",
            ]
        );
        assert_eq!((apps, groups), (0, 0));
    }

    const SELECTS_NOTHING: &str = r#"{"spec": {"attachments": [
        {"apiGroup": "apps.example.io", "kind": "Postgres", "name": "a"},
        {"kind": "postgreses", "name": "b"},
        {"kind": "Database", "name": "c"},
        {"kind": "Postgres", "name": "d"},
        {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "d"}],
        "ingress": [{"fromSG": ["Frontend"]}]}}"#;

    #[test]
    fn what_selects_nothing_warns_by_default() {
        let (violations, warnings, apps, _) = walk(SELECTS_NOTHING, &Settings::default());
        assert!(violations.is_empty(), "{violations:#?}");
        assert_eq!(
            warnings,
            vec![
                "spec.attachments[0].apiGroup: \"apps.example.io\" selects no pods: SecurityGroups attach only to applications of apps.cozystack.io; remove apiGroup or set it to apps.cozystack.io",
                "spec.attachments[1].kind: \"postgreses\" is not a Cozystack application kind, so the reference selects no pods; did you mean \"Postgres\"? no ApplicationDefinition serves it either; kinds are case-sensitive",
                "spec.attachments[2].kind: \"Database\" is not a Cozystack application kind, so the reference selects no pods; no ApplicationDefinition serves it either; kinds are case-sensitive",
                "spec.attachments[4]: duplicates spec.attachments[3] (Postgres \"d\"; an empty apiGroup means apps.cozystack.io); remove one of them",
                "spec.ingress[0].fromSG[0]: \"Frontend\" cannot name a SecurityGroup (names are lowercase RFC 1123 subdomains), so this peer matches no pods; use the name kubectl get securitygroups shows",
            ]
        );
        assert_eq!(apps, 1, "only spec.attachments[3] is looked up");
    }

    #[test]
    fn what_selects_nothing_is_denied_by_setting() {
        let (violations, warnings, apps, _) = walk(SELECTS_NOTHING, &deny_all());
        assert_eq!(violations.len(), 5, "{violations:#?}");
        assert!(warnings.is_empty(), "{warnings:#?}");
        for (violation, finding) in violations.iter().zip([
            "foreign-api-group",
            "unknown-kind",
            "unknown-kind",
            "duplicate-attachment",
            "impossible-group-name",
        ]) {
            assert!(
                violation.ends_with(&format!(" (deny: {finding})")),
                "{violation}"
            );
        }
        assert_eq!(apps, 1);
        let only = settings(r#"{"deny": ["duplicate-attachment"]}"#);
        let (violations, warnings, ..) = walk(SELECTS_NOTHING, &only);
        assert_eq!(violations.len(), 1);
        assert!(violations[0].starts_with("spec.attachments[4]: duplicates"));
        assert_eq!(warnings.len(), 4);
    }

    #[test]
    fn warnings_fit_the_api_servers_limit() {
        let (_, warnings, ..) = walk(SELECTS_NOTHING, &Settings::default());
        for warning in &warnings {
            assert!(warning.len() <= shared::warnings::MAX_CHARS, "{warning}");
        }
    }

    #[test]
    fn kinds_served_by_an_application_definition() {
        let cluster = Definitions::serving(COMPUTE_PLANE);
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "ComputePlane", "name": "c"}],
                "ingress": [{"fromApp": [{"kind": "ComputePlane", "name": "d"}, {"kind": "Postgres", "name": "e"}]}]}}"#,
            "{}",
            &deny_all(),
            &cluster,
        );
        assert!(walked.violations.is_empty() && walked.warnings.is_empty());
        assert_eq!(walked.apps, 3);
        assert_eq!(cluster.calls.get(), 1, "one list for every unknown kind");
        // Built-in kinds and extraKinds need no list.
        let cluster = Definitions::serving(COMPUTE_PLANE);
        let extra = Settings {
            extra_kinds: vec!["ComputePlane".into()],
            ..Settings::default()
        };
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "ComputePlane", "name": "c"}, {"kind": "Postgres", "name": "db"}], "ingress": [{}]}}"#,
            "{}",
            &extra,
            &cluster,
        );
        assert!(walked.violations.is_empty() && walked.warnings.is_empty());
        assert_eq!(cluster.calls.get(), 0);
    }

    #[test]
    fn kinds_not_checked_warn_even_when_denied() {
        let cluster = Definitions {
            answer: Err("Policy has not been granted access"),
            calls: Cell::new(0),
        };
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "Postgress", "name": "c"}, {"kind": "ComputePlane", "name": "d"}]}}"#,
            "{}",
            &deny_all(),
            &cluster,
        );
        assert!(walked.violations.is_empty(), "{:#?}", walked.violations);
        assert_eq!(
            walked.warnings,
            vec![
                "spec.attachments[0].kind: kind not checked: \"Postgress\" is not built in (did you mean \"Postgres\"?) and cannot list the ApplicationDefinitions: Policy has not been granted access",
                "spec.attachments[1].kind: kind not checked: \"ComputePlane\" is not built in and cannot list the ApplicationDefinitions: Policy has not been granted access",
                "spec: no ingress or egress rules: members are labelled but not isolated (Cozystack 1.6 has no default deny)",
            ]
        );
        assert_eq!(walked.apps, 0);
        assert_eq!(cluster.calls.get(), 1);
        // An unreadable answer is a failed lookup too.
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "Foo", "name": "c"}], "ingress": [{}]}}"#,
            "{}",
            &deny_all(),
            &Definitions::serving("[]"),
        );
        assert!(walked.violations.is_empty());
        assert!(walked.warnings[0].contains("unreadable list answer"));
        // Offline.
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "Foo", "name": "c"}], "ingress": [{}]}}"#,
            "{}",
            &deny_all(),
            &Offline,
        );
        assert!(walked.warnings[0].ends_with("ApplicationDefinitions: no cluster to ask"));
    }

    #[test]
    fn without_lookups_kinds_are_judged_by_the_catalogue() {
        let settings = settings(
            r#"{"deny": ["duplicate-attachment", "foreign-api-group", "impossible-group-name",
                "unknown-kind"], "ignore": ["missing-target"]}"#,
        );
        let walked = walk_in(
            r#"{"spec": {"attachments": [{"kind": "ComputePlane", "name": "c"}], "ingress": [{}]}}"#,
            "{}",
            &settings,
            &Offline,
        );
        assert_eq!(
            walked.violations,
            vec![
                "spec.attachments[0].kind: \"ComputePlane\" is not a Cozystack application kind, so the reference selects no pods; kinds are case-sensitive; add a kind this cluster serves to the setting extraKinds (deny: unknown-kind)"
            ]
        );
    }

    #[test]
    fn stored_references_get_at_most_a_warning() {
        // The stored object already had every finding; the update adds a
        // CIDR. Nothing is denied, everything is still said.
        let old = SELECTS_NOTHING;
        let new = SELECTS_NOTHING.replace(
            r#""fromSG": ["Frontend"]"#,
            r#""fromSG": ["Frontend"], "fromCIDR": ["10.0.0.0/8"]"#,
        );
        let walked = walk_in(&new, old, &deny_all(), &Definitions::serving(COMPUTE_PLANE));
        assert!(walked.violations.is_empty(), "{:#?}", walked.violations);
        assert_eq!(walked.warnings.len(), 5);
        // A finding the update adds is denied: a second duplicate, another
        // foreign group, a new impossible peer name, a new unknown kind.
        let new = SELECTS_NOTHING
            .replace(
                r#"{"kind": "Postgres", "name": "d"},"#,
                r#"{"kind": "Postgres", "name": "d"}, {"kind": "Postgres", "name": "d"}, {"apiGroup": "x.io", "kind": "Postgres", "name": "a"}, {"kind": "Databse", "name": "c"},"#,
            )
            .replace(r#"["Frontend"]"#, r#"["Frontend", "Backend"]"#);
        let walked = walk_in(&new, old, &deny_all(), &Definitions::serving(COMPUTE_PLANE));
        assert_eq!(
            walked
                .violations
                .iter()
                .map(|v| v.split(':').next().unwrap())
                .collect::<Vec<_>>(),
            vec![
                "spec.attachments[5].apiGroup",
                "spec.attachments[6].kind",
                "spec.ingress[0].fromSG[1]",
            ],
            "{:#?}",
            walked.violations
        );
        // The stored duplicate pair stays a warning even with a third copy:
        // the object already attached Postgres "d" twice.
        assert_eq!(walked.warnings.len(), 6, "{:#?}", walked.warnings);
    }

    #[test]
    fn near_misses_get_a_suggestion() {
        assert_eq!(edit_distance("Postgress", "Postgres"), 1);
        assert_eq!(edit_distance("kubernetes", "Kubernetes"), 0);
        assert_eq!(edit_distance("", "abc"), 3);
        for (typo, known) in [
            ("Postgress", "Postgres"),
            ("postgres", "Postgres"),
            ("kuberneteses", "Kubernetes"),
            ("VMInstanse", "VMInstance"),
        ] {
            assert!(
                unknown_kind(typo, KindBasis::Cluster)
                    .contains(&format!("did you mean {known:?}?")),
                "{typo}"
            );
        }
        assert!(!unknown_kind("Database", KindBasis::Static).contains("did you mean"));
    }

    #[test]
    fn legacy_target_ref_shows_the_new_form() {
        let (violations, ..) = walk(
            r#"{"spec": {"targetRef": {"kind": "Postgres", "name": "db"}}}"#,
            &Settings::default(),
        );
        assert_eq!(violations.len(), 1);
        assert!(violations[0].starts_with("spec.targetRef: targetRef is the pre-release shape"));
        assert!(violations[0].ends_with("spec.attachments: [{kind: Postgres, name: db}] instead"));
        let (violations, ..) = walk(r#"{"spec": {"targetRef": 7}}"#, &Settings::default());
        assert!(violations[0].contains("[{kind: <Kind>, name: <name>}]"));
    }

    #[test]
    fn membership_only_groups_get_a_warning() {
        let (violations, warnings, ..) = walk(
            r#"{"spec": {"attachments": [{"kind": "Kubernetes", "name": "web"}]}}"#,
            &Settings::default(),
        );
        assert!(violations.is_empty());
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].starts_with("spec: no ingress or egress rules"));
        assert!(warnings[0].len() <= 120, "{}", warnings[0].len());
        let (_, warnings, ..) = walk(r#"{"spec": {}}"#, &Settings::default());
        assert!(warnings.is_empty());
    }

    #[test]
    fn malformed_parts_are_field_errors() {
        let mut found = Findings::new();
        let settings = Settings::default();
        for (text, message) in [
            (
                r#"{"attachments": {}}"#,
                "spec.attachments must be a list, not an object",
            ),
            (
                r#"{"ingress": ["x"]}"#,
                "spec.ingress[0] must be an object, not a string",
            ),
            (
                r#"{"ingress": [{"toPorts": [{"ports": [{"port": 443}]}]}]}"#,
                "spec.ingress[0].toPorts[0].ports[0].port must be a string, not a number",
            ),
            (
                r#"{"egress": [{"toSG": [1]}]}"#,
                "spec.egress[0].toSG[0] must be a string, not a number",
            ),
        ] {
            let object = format!(r#"{{"spec": {text}}}"#);
            let object = json(&object);
            let object = Field::root(Some(&object));
            let known = Known::default();
            let mut walk = Walk::new(&mut found, &settings, &Offline, &known);
            let error = walk.spec(&object.field("spec").unwrap()).unwrap_err();
            assert_eq!(error.to_string(), message);
        }
    }

    #[test]
    fn known_references_are_read_leniently() {
        let old = json(
            r#"{"spec": {"attachments": [{"kind": "Postgres", "name": "db"}, 7],
                "ingress": [{"fromApp": [{"kind": "Kubernetes", "name": "web"}], "fromSG": ["a", 3]}],
                "egress": "broken"}}"#,
        );
        let known = Known::read(&Field::root(Some(&old)));
        assert!(known.has_app("Postgres", "db"));
        assert!(known.has_app("Kubernetes", "web"));
        assert!(!known.has_app("Postgres", "web"));
        assert!(known.has_group("a"));
        assert!(!known.has_group("b"));
        assert!(!Known::read(&Field::root(Some(&json("\"x\"")))).has_group("a"));
        assert!(known.has_reference("apps.cozystack.io", "Postgres", "db"));
        assert!(known.has_reference("", "Kubernetes", "web"));
        assert!(!known.has_reference("apps.example.io", "Postgres", "db"));
        assert!(!known.duplicates_attachment("", "Postgres", "db"));
        let twice = json(
            r#"{"spec": {"attachments": [{"kind": "Postgres", "name": "db"},
                {"apiGroup": "apps.cozystack.io", "kind": "Postgres", "name": "db"}]}}"#,
        );
        let known = Known::read(&Field::root(Some(&twice)));
        assert!(known.duplicates_attachment("", "Postgres", "db"));
        assert!(!known.duplicates_attachment("x.io", "Postgres", "db"));
    }

    #[test]
    fn an_empty_name_gets_both_messages_of_is_qualified_name() {
        for object in [
            r#"{"metadata": {"generateName": "db-", "name": ""}}"#,
            r#"{"metadata": {"generateName": "db-"}}"#,
        ] {
            let mut found = Findings::new();
            let settings = Settings::default();
            let object = json(object);
            let object = Field::root(Some(&object));
            let name = object.field("metadata").unwrap().field("name").unwrap();
            let known = Known::default();
            Walk::new(&mut found, &settings, &Offline, &known)
                .name(&name)
                .unwrap();
            let message = verdict(found, &settings).message().unwrap();
            let lines = crate::tests::untagged(message.lines().map(str::to_owned).collect());
            assert_eq!(
                lines.join("\n"),
                "metadata.name: Invalid value: \"\": name part must be non-empty\n\
                 metadata.name: Invalid value: \"\": name part must consist of alphanumeric \
                 characters, '-', '_' or '.', and must start and end with an alphanumeric \
                 character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for \
                 validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
            );
        }
    }

    #[test]
    fn names_of_the_group_itself() {
        for (name, expected) in [
            ("db", None),
            ("a.b-c", None),
            ("My_Group", Some("not an object name")),
            (
                "a".repeat(64).as_str(),
                Some("name part must be no more than 63 characters"),
            ),
        ] {
            let mut found = Findings::new();
            let settings = Settings::default();
            let object = format!(r#"{{"metadata": {{"name": "{name}"}}}}"#);
            let object = json(&object);
            let object = Field::root(Some(&object));
            let name = object.at("metadata.name").unwrap();
            let known = Known::default();
            Walk::new(&mut found, &settings, &Offline, &known)
                .name(&name)
                .unwrap();
            let message = verdict(found, &settings).message();
            match expected {
                None => assert_eq!(message, None),
                Some(fragment) => assert!(message.unwrap().contains(fragment)),
            }
        }
    }
}
