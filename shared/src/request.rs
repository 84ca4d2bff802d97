//! The admission request a policy receives.
//!
//! policy-server calls `validate` with `{"request": <AdmissionRequest>,
//! "settings": <settings>}`. [`read`] parses it with serde_json: the
//! request's small header (kind, resource, name, namespace, operation,
//! userInfo, dryRun) borrowed from the payload, and `object`, `oldObject`
//! and the settings as raw JSON. An object is read only when the rule asks
//! for it, and then only the subtrees the rule reads ([`Reads`]): a rule
//! that judges an UPDATE by its new object never builds the old one. The
//! objects come back as [`Field`]s rooted at the object, so their paths read
//! `spec.storageClass` rather than `request.object.spec.storageClass`.

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::field::{Field, FieldError, FieldPath};
use crate::lookup::Cluster;
use crate::select::{Reads, Selection, Text};

/// The admission operation: the one type for it, here and on the host side
/// (`admission` re-exports it), spelt as the apiserver spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The authenticated user behind the request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct User<'a> {
    pub username: Cow<'a, str>,
    pub groups: Vec<Cow<'a, str>>,
}

/// An admission request, with what the rule reads of its objects.
pub struct Request<'a> {
    pub operation: Operation,
    /// `kind.group`, e.g. `apps.cozystack.io` (empty for the core group).
    pub group: Cow<'a, str>,
    /// `kind.kind`, e.g. `Postgres`.
    pub kind: Cow<'a, str>,
    /// `resource.resource`, the plural (audit-scanner sends the kind here).
    pub resource: Cow<'a, str>,
    /// `name`, falling back to the object's `metadata.name`.
    pub name: Cow<'a, str>,
    /// `namespace`, empty for cluster-scoped objects.
    pub namespace: Cow<'a, str>,
    pub user: User<'a>,
    pub dry_run: bool,
    object: Object<'a>,
    old_object: Object<'a>,
    cluster: &'a dyn Cluster,
    /// The whole payload, for a rule that reads more of an object than its
    /// policy read up front.
    payload: &'a str,
}

/// An object of the request, as the policy's [`Selection`] keeps it.
struct Object<'a> {
    /// `object` or `oldObject`, as messages name it.
    member: &'static str,
    kept: Kept<'a>,
    /// Why a read the rule asked for failed (`request.oldObject: recursion
    /// limit exceeded`): the request is then malformed, though a rule that
    /// never asks (an operation it does not judge) still answers.
    failed: OnceCell<String>,
}

enum Kept<'a> {
    /// Read while the request was parsed.
    Read(Option<Value>),
    /// Raw JSON, read for `paths` when the rule first asks.
    Raw {
        raw: Option<&'a RawValue>,
        paths: &'static [&'static str],
        read: OnceCell<Option<Value>>,
    },
}

impl Default for Kept<'_> {
    fn default() -> Self {
        Kept::Read(None)
    }
}

impl<'a> Object<'a> {
    fn new(member: &'static str, kept: Kept<'a>) -> Self {
        Object {
            member,
            kept,
            failed: OnceCell::new(),
        }
    }

    fn value(&self) -> Option<&Value> {
        match &self.kept {
            Kept::Read(value) => value.as_ref(),
            Kept::Raw { raw, paths, read } => read
                .get_or_init(|| self.record(read_object(raw.as_ref()?.get(), &Reads::new(paths))))
                .as_ref(),
        }
    }

    /// `paths` of this object, which is `request.<member>` of `payload`:
    /// from the raw object, or, when it was read up front, from the
    /// payload again.
    fn reading(&self, paths: &[&str], payload: &str) -> Option<Value> {
        match &self.kept {
            Kept::Raw { raw, .. } => {
                self.record(read_object(raw.as_ref()?.get(), &Reads::new(paths)))
            }
            Kept::Read(_) => {
                let reads = Reads::new(paths).under_request(self.member);
                let mut whole = self.record(read_object(payload, &reads))?;
                Some(whole.get_mut("request")?.get_mut(self.member)?.take())
                    .filter(|v| !v.is_null())
            }
        }
    }

    /// `metadata.name`, for the request's name; a failure here is not the
    /// rule's, so it is not recorded.
    fn name(&self) -> Option<String> {
        let read;
        let value = match &self.kept {
            Kept::Read(value) => value.as_ref()?,
            Kept::Raw { raw, .. } => {
                read = read_object(raw.as_ref()?.get(), &Reads::new(&[])).ok()?;
                &read
            }
        };
        Some(value.get("metadata")?.get("name")?.as_str()?.to_owned())
    }

    /// The value of a read, keeping its failure for the verdict.
    fn record(&self, read: Result<Value, String>) -> Option<Value> {
        read.map_err(|error| {
            // The first failure is the one the message names.
            let _ = self.failed.set(format!("request.{}: {error}", self.member));
        })
        .ok()
    }
}

/// `reads` of `json`, serde_json's error without its position.
fn read_object(json: &str, reads: &Reads<'_>) -> Result<Value, String> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    reads
        .seed()
        .deserialize(&mut deserializer)
        .map_err(|e| without_position(&e))
}

impl fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("operation", &self.operation)
            .field("kind", &self.kind)
            .field("name", &self.name)
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

/// A `validate` payload: the request and the settings, still raw.
#[derive(Debug)]
pub struct Payload<'a> {
    pub request: Request<'a>,
    pub settings: Option<&'a RawValue>,
}

/// Why a payload is not an admission request. It is displayed as the
/// rejection says it, naming the field and the cause; [`source`] gives a
/// caller the cause itself.
///
/// [`source`]: std::error::Error::source
#[derive(Debug)]
pub enum RequestError {
    /// The payload is not UTF-8.
    NotUtf8(std::str::Utf8Error),
    /// The payload does not read as a request: not JSON, or a member of the
    /// wrong shape, which serde_json's error names.
    Unreadable(serde_json::Error),
    /// A member every request carries is absent (`request`,
    /// `request.operation`).
    Missing(&'static str),
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotUtf8(error) => write!(f, "the request is not UTF-8: {error}"),
            RequestError::Unreadable(error) => f.write_str(&without_position(error)),
            RequestError::Missing(member) => write!(f, "{member}: is required"),
        }
    }
}

impl std::error::Error for RequestError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RequestError::NotUtf8(error) => Some(error),
            RequestError::Unreadable(error) => Some(error),
            RequestError::Missing(_) => None,
        }
    }
}

/// serde_json's message without its ` at line 1 column 345` suffix, which
/// points into a payload nobody wrote by hand.
fn without_position(error: &impl fmt::Display) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) => text.get(..at).unwrap_or(&text).to_owned(),
        None => text,
    }
}

/// Reads a `validate` payload; of its objects, `reading` says what the rule
/// reads, and lookups go to `cluster`.
pub fn read<'a>(
    payload: &'a [u8],
    reading: Selection,
    cluster: &'a dyn Cluster,
) -> Result<Payload<'a>, RequestError> {
    let up_front = match reading {
        Selection::Paths(paths) => Ok(Reads::new(paths)),
        Selection::OnDemand(paths) => Err(paths),
    };
    // Valid UTF-8 once, up front: serde_json then need not check each
    // string it reads.
    let text = std::str::from_utf8(payload).map_err(RequestError::NotUtf8)?;
    let parts = match parts(text, up_front.as_ref().map_err(|paths| *paths)) {
        Ok(parts) => parts,
        // An object too deep (or otherwise unreadable) for the reads is
        // kept raw, so a rule that never asks for it (an operation it does
        // not judge) still answers; asking makes the request malformed.
        Err(error) => match reading {
            Selection::Paths(paths) => parts(text, Err(paths)).map_err(|_| error)?,
            Selection::OnDemand(_) => return Err(error),
        },
    };
    let mut header = parts.header.ok_or(RequestError::Missing("request"))?;
    let operation = header
        .operation
        .ok_or(RequestError::Missing("request.operation"))?;
    let user = header.user_info.unwrap_or_default();
    let mut request = Request {
        operation,
        group: or_empty(header.kind.as_mut().and_then(|k| k.group.take())),
        kind: or_empty(header.kind.and_then(|k| k.kind)),
        resource: or_empty(header.resource.and_then(|r| r.resource)),
        name: or_empty(header.name),
        namespace: or_empty(header.namespace),
        user: User {
            username: or_empty(user.username),
            groups: user
                .groups
                .unwrap_or_default()
                .into_iter()
                .map(|Text(group)| group)
                .collect(),
        },
        dry_run: header.dry_run.unwrap_or_default(),
        object: Object::new("object", header.object),
        old_object: Object::new("oldObject", header.old_object),
        cluster,
        payload: text,
    };
    if request.name.is_empty() {
        // A malformed object is the rule's business; the name is only a
        // fallback here.
        request.name = Cow::Owned(request.subject_object().name().unwrap_or_default());
    }
    Ok(Payload {
        request,
        settings: parts.settings,
    })
}

/// The payload's parts, its objects read as `reads` says.
fn parts<'a>(text: &'a str, reads: ObjectReads<'_>) -> Result<Parts<'a>, RequestError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    PayloadSeed { reads }
        .deserialize(&mut deserializer)
        .and_then(|parts| deserializer.end().map(|()| parts))
        .map_err(RequestError::Unreadable)
}

impl<'a> Request<'a> {
    /// Why an object the rule asked for could not be read
    /// (`request.oldObject: recursion limit exceeded`): the request is then
    /// malformed, whatever the rule answered.
    pub fn unreadable(&self) -> Option<&str> {
        self.object
            .failed
            .get()
            .or_else(|| self.old_object.failed.get())
            .map(String::as_str)
    }

    /// `object`, with paths relative to the object (`spec.x`, not
    /// `request.object.spec.x`); absent on DELETE.
    pub fn object(&self) -> Field<'_> {
        Field::root(self.object.value())
    }

    /// `oldObject`, with paths relative to the object; present on UPDATE and
    /// DELETE.
    pub fn old_object(&self) -> Field<'_> {
        Field::root(self.old_object.value())
    }

    /// `paths` of `object`, read now, for a rule that reads more than its
    /// policy declared (settings that name more fields); `None` when the
    /// request has no object. Under [`Selection::OnDemand`] this reads the
    /// raw object; under [`Selection::Paths`] the whole payload again.
    pub fn object_reading(&self, paths: &[&str]) -> Option<Value> {
        self.object.reading(paths, self.payload)
    }

    /// `paths` of `oldObject`, as [`Request::object_reading`].
    pub fn old_object_reading(&self, paths: &[&str]) -> Option<Value> {
        self.old_object.reading(paths, self.payload)
    }

    /// `object`, which the rule cannot judge without: absent is malformed
    /// (400, `object: is required`).
    pub fn required_object(&self) -> Result<Field<'_>, FieldError> {
        required(self.object(), "object")
    }

    /// `oldObject`, which the rule cannot judge without: absent is malformed
    /// (400, `oldObject: is required`).
    pub fn required_old_object(&self) -> Result<Field<'_>, FieldError> {
        required(self.old_object(), "oldObject")
    }

    /// The object the request is about: `oldObject` on DELETE, else `object`.
    pub fn subject(&self) -> Field<'_> {
        Field::root(self.subject_object().value())
    }

    fn subject_object(&self) -> &Object<'a> {
        if self.operation == Operation::Delete {
            &self.old_object
        } else {
            &self.object
        }
    }

    /// Where cluster reads go (the policy-server, or a test's stand-in).
    pub fn cluster(&self) -> &'a dyn Cluster {
        self.cluster
    }

    /// The resource as kubectl names it unambiguously: `configmaps`,
    /// `postgreses.apps.cozystack.io`.
    pub fn kubectl_resource(&self) -> String {
        let resource = if self.resource.is_empty() {
            // Kinds are ASCII identifiers.
            self.kind.to_ascii_lowercase()
        } else {
            self.resource.to_string()
        };
        if self.group.is_empty() {
            resource
        } else {
            format!("{resource}.{}", self.group)
        }
    }

    /// ` --namespace <ns>` for kubectl commands, empty when cluster-scoped.
    pub fn kubectl_namespace_flag(&self) -> String {
        if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" --namespace {}", self.namespace)
        }
    }

    /// `Kind namespace/name` for messages.
    pub fn describe(&self) -> String {
        describe(&self.kind, &self.namespace, &self.name)
    }
}

/// `Kind namespace/name`, or `Kind name` when `namespace` is empty: how every
/// message and report names an object.
pub fn describe(kind: &str, namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        format!("{kind} {name}")
    } else {
        format!("{kind} {namespace}/{name}")
    }
}

/// `object` itself when present; else `Missing`, named as the request names
/// it (`object`, `oldObject`: an object field's own path is the root).
pub fn required<'f>(object: Field<'f>, name: &str) -> Result<Field<'f>, FieldError> {
    if object.is_present() {
        Ok(object)
    } else {
        Err(FieldError::Missing {
            path: FieldPath::parse(name),
        })
    }
}

/// A header string, empty when absent.
fn or_empty<'a>(member: Option<Text<'a>>) -> Cow<'a, str> {
    member.map(|Text(text)| text).unwrap_or_default()
}

#[derive(Deserialize, Default)]
struct GroupKind<'a> {
    #[serde(borrow, default)]
    group: Option<Text<'a>>,
    #[serde(borrow, default)]
    kind: Option<Text<'a>>,
}

#[derive(Deserialize, Default)]
struct Resource<'a> {
    #[serde(borrow, default)]
    resource: Option<Text<'a>>,
}

#[derive(Deserialize, Default)]
struct UserInfo<'a> {
    #[serde(borrow, default)]
    username: Option<Text<'a>>,
    #[serde(borrow, default)]
    groups: Option<Vec<Text<'a>>>,
}

/// The members of `request` a rule can use; the header's strings are
/// borrowed from the payload.
#[derive(Default)]
struct Header<'a> {
    kind: Option<GroupKind<'a>>,
    resource: Option<Resource<'a>>,
    name: Option<Text<'a>>,
    namespace: Option<Text<'a>>,
    operation: Option<Operation>,
    user_info: Option<UserInfo<'a>>,
    dry_run: Option<bool>,
    object: Kept<'a>,
    old_object: Kept<'a>,
}

/// The payload's two members.
struct Parts<'a> {
    header: Option<Header<'a>>,
    settings: Option<&'a RawValue>,
}

/// How the objects are read: up front with these reads, or later for
/// these paths.
type ObjectReads<'r> = Result<&'r Reads<'r>, &'static [&'static str]>;

struct PayloadSeed<'r> {
    reads: ObjectReads<'r>,
}

impl<'de> DeserializeSeed<'de> for PayloadSeed<'_> {
    type Value = Parts<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Parts<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for PayloadSeed<'_> {
    type Value = Parts<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object with `request` and `settings`")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Parts<'de>, A::Error> {
        let mut parts = Parts {
            header: None,
            settings: None,
        };
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            match &*key {
                "request" => {
                    parts.header = Some(map.next_value_seed(HeaderSeed { reads: self.reads })?);
                }
                "settings" => parts.settings = Some(map.next_value()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(parts)
    }
}

struct HeaderSeed<'r> {
    reads: ObjectReads<'r>,
}

impl<'de> DeserializeSeed<'de> for HeaderSeed<'_> {
    type Value = Header<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Header<'de>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

/// `request.<key>: <problem>`: serde's error, named by the member it is in.
fn at<E: de::Error>(key: &str) -> impl FnOnce(E) -> E + '_ {
    move |error| E::custom(format!("request.{key}: {}", without_position(&error)))
}

impl<'r> HeaderSeed<'r> {
    /// The next member as an object: read as `reads` says, or kept raw.
    fn object<'de, A: MapAccess<'de>>(&self, map: &mut A) -> Result<Kept<'de>, A::Error> {
        Ok(match self.reads {
            Ok(reads) => {
                Kept::Read(Some(map.next_value_seed(reads.seed())?).filter(|v| !v.is_null()))
            }
            Err(paths) => Kept::Raw {
                raw: map.next_value::<Option<&'de RawValue>>()?,
                paths,
                read: OnceCell::new(),
            },
        })
    }
}

impl<'de> Visitor<'de> for HeaderSeed<'_> {
    type Value = Header<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an AdmissionRequest object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Header<'de>, A::Error> {
        let mut header = Header::default();
        while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
            let key = &*key;
            match key {
                "kind" => header.kind = map.next_value().map_err(at(key))?,
                "resource" => header.resource = map.next_value().map_err(at(key))?,
                "name" => header.name = map.next_value().map_err(at(key))?,
                "namespace" => header.namespace = map.next_value().map_err(at(key))?,
                "operation" => header.operation = map.next_value().map_err(at(key))?,
                "userInfo" => header.user_info = map.next_value().map_err(at(key))?,
                "dryRun" => header.dry_run = map.next_value().map_err(at(key))?,
                "object" => header.object = self.object(&mut map).map_err(at(key))?,
                "oldObject" => header.old_object = self.object(&mut map).map_err(at(key))?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(header)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lookup::Offline;

    const DELETE: &str = r#"{"settings": {"x": 1}, "request": {
        "uid": "u", "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"},
        "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "postgreses"},
        "namespace": "tenant-foo", "operation": "DELETE",
        "userInfo": {"username": "alice", "groups": ["g1", "system:authenticated"]},
        "object": null, "oldObject": {"metadata": {"name": "db"}, "spec": {"storageClass": "local"}, "status": {}}}}"#;

    fn parse(text: &str) -> Result<Payload<'_>, RequestError> {
        read(text.as_bytes(), Selection::Paths(&["spec"]), &Offline)
    }

    #[test]
    fn reads_what_rules_need() {
        let payload = parse(DELETE).unwrap();
        let request = payload.request;
        assert_eq!(request.operation, Operation::Delete);
        assert_eq!(request.kind, "Postgres");
        assert_eq!(request.name, "db", "falls back to oldObject.metadata.name");
        assert_eq!(request.user.groups, vec!["g1", "system:authenticated"]);
        assert!(!request.object().is_present());
        let class = request.subject().at("spec.storageClass").unwrap();
        assert_eq!(class.path().to_string(), "spec.storageClass");
        assert_eq!(class.string().unwrap(), Some("local"));
        assert!(
            !request.subject().field("status").unwrap().is_present(),
            "not read"
        );
        assert_eq!(request.kubectl_resource(), "postgreses.apps.cozystack.io");
        assert_eq!(request.describe(), "Postgres tenant-foo/db");
        assert_eq!(payload.settings.unwrap().get(), "{\"x\": 1}");
    }

    #[test]
    fn header_strings_are_borrowed_unless_escaped() {
        let escaped = DELETE.replace(
            r#""namespace": "tenant-foo""#,
            r#""namespace": "tenant-\u0066oo""#,
        );
        let request = parse(&escaped).unwrap().request;
        assert!(matches!(request.kind, Cow::Borrowed("Postgres")));
        assert!(matches!(request.user.username, Cow::Borrowed("alice")));
        assert!(matches!(
            request.user.groups[1],
            Cow::Borrowed("system:authenticated")
        ));
        assert!(matches!(request.namespace, Cow::Owned(ref ns) if ns == "tenant-foo"));
    }

    #[test]
    fn members_may_come_in_any_order() {
        let reordered = r#"{"request": {"oldObject": {"spec": {"a": 1}}, "object": {"spec": {"b": 2}},
            "operation": "UPDATE", "kind": {"kind": "K"}, "resource": {"resource": "ks"}, "userInfo": {}},
            "settings": {}}"#;
        let request = parse(reordered).unwrap().request;
        assert_eq!(
            request.object().at("spec.b").unwrap().json(),
            Some(&Value::from(2))
        );
        assert_eq!(
            request.old_object().at("spec.a").unwrap().json(),
            Some(&Value::from(1))
        );
        assert_eq!(request.namespace, "");
    }

    #[test]
    fn malformed_requests_name_the_member() {
        let error = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(error("{}"), "request: is required");
        assert_eq!(
            error(r#"{"request": {}}"#),
            "request.operation: is required"
        );
        assert!(
            error(r#"{"request": {"operation": "PATCH"}}"#)
                .starts_with("request.operation: unknown variant `PATCH`")
        );
        assert!(
            error(r#"{"request": {"operation": "CREATE", "userInfo": {"groups": ["a", 7]}}}"#)
                .starts_with("request.userInfo: invalid type: integer `7`, expected a string")
        );
        assert!(
            error(r#"{"request": {"operation": "CREATE", "object": {"spec": @}}}"#)
                .starts_with("request.object: ")
        );
        assert!(error("[]").contains("expected an object"));
        assert!(error(r#"{"request": {"operation": "CREATE"}} trailing"#).contains("trailing"));
    }

    #[test]
    fn objects_read_on_demand() {
        let payload = read(DELETE.as_bytes(), Selection::OnDemand(&[]), &Offline).unwrap();
        let request = payload.request;
        assert_eq!(request.name, "db");
        assert!(
            !request.old_object().field("spec").unwrap().is_present(),
            "not read up front"
        );
        let spec = request.old_object_reading(&["spec.storageClass"]).unwrap();
        assert_eq!(spec["spec"], serde_json::json!({"storageClass": "local"}));
        assert_eq!(
            request.object_reading(&["spec"]),
            None,
            "DELETE has no object"
        );
    }

    #[test]
    fn objects_read_up_front_are_read_again_for_more() {
        let request = parse(DELETE).unwrap().request;
        assert!(
            !request.old_object().field("status").unwrap().is_present(),
            "not read up front"
        );
        let read = request.old_object_reading(&["status"]).unwrap();
        assert_eq!(
            read,
            serde_json::json!({"metadata": {"name": "db"}, "status": {}})
        );
        assert_eq!(request.object_reading(&["spec"]), None, "object is null");
        let escaped = DELETE.replace(r#""oldObject""#, r#""old\u004fbject""#);
        let request = parse(&escaped).unwrap().request;
        assert_eq!(
            request.old_object_reading(&["spec.storageClass"]).unwrap()["spec"],
            serde_json::json!({"storageClass": "local"})
        );
    }

    /// `DELETE` with an `oldObject` whose `spec` nests arrays `depth` deep.
    fn deep_delete(depth: usize) -> String {
        let spec = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        DELETE.replace(r#"{"storageClass": "local"}"#, &spec)
    }

    #[test]
    fn objects_too_deep_fail_only_the_rule_that_reads_them() {
        let text = deep_delete(200);
        for reading in [Selection::Paths(&["spec"]), Selection::OnDemand(&["spec"])] {
            let request = read(text.as_bytes(), reading, &Offline).unwrap().request;
            assert_eq!(request.name, "db", "the name is read past the spec");
            assert_eq!(request.unreadable(), None, "nothing asked yet");
            assert!(!request.object().is_present());
            assert_eq!(request.unreadable(), None, "DELETE has no object");
            assert!(!request.old_object().is_present());
            assert_eq!(
                request.unreadable(),
                Some("request.oldObject: recursion limit exceeded")
            );
        }
        let request = parse(&text).unwrap().request;
        assert!(request.old_object_reading(&["status"]).is_some());
        assert_eq!(request.unreadable(), None, "the spec is skipped");
        assert_eq!(request.old_object_reading(&["spec"]), None);
        assert_eq!(
            request.unreadable(),
            Some("request.oldObject: recursion limit exceeded"),
            "a read for more paths fails too"
        );
        let text = deep_delete(100);
        let shallow = parse(&text).unwrap().request;
        assert!(shallow.subject().at("spec").unwrap().is_present());
        assert_eq!(shallow.unreadable(), None);
    }

    #[test]
    fn escaped_and_null_header_members() {
        let text = r#"{"request": {"operation": "CREATE", "name": "a\u0062", "namespace": null,
            "userInfo": {"username": null, "groups": null}, "kind": {"group": null, "kind": "K"}}}"#;
        let request = parse(text).unwrap().request;
        assert_eq!(request.name, "ab");
        assert_eq!(request.namespace, "");
        assert_eq!(request.group, "");
        assert!(request.user.groups.is_empty());
    }
}
