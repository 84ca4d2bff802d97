//! The admission request a policy receives, read lazily.
//!
//! policy-server calls `validate` with `{"request": <AdmissionRequest>,
//! "settings": <settings>}`. [`Request::parse`] scans the request once and
//! keeps the fields every rule needs; `object` and `oldObject` stay unparsed
//! [`Field`]s rooted at the object, so their paths read `spec.storageClass`
//! rather than `request.object.spec.storageClass`.

use std::borrow::Cow;

use crate::field::{Field, FieldError, FieldPath, Object};
use crate::json::{Json, key_equals, last_member};

/// The admission operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Connect,
}

impl Operation {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "CREATE" => Some(Operation::Create),
            "UPDATE" => Some(Operation::Update),
            "DELETE" => Some(Operation::Delete),
            "CONNECT" => Some(Operation::Connect),
            _ => None,
        }
    }
}

/// The authenticated user behind the request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct User<'a> {
    pub username: Cow<'a, str>,
    pub groups: Vec<Cow<'a, str>>,
}

/// An admission request.
#[derive(Debug)]
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
    /// The rest of the request, read only as far as a rule asks.
    members: Object<'a>,
}

/// The `validate` payload split into request and raw settings.
#[derive(Debug)]
pub struct Payload<'a> {
    pub request: Request<'a>,
    pub settings: Option<Json<'a>>,
}

/// The payload could not be read; the error names the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub FieldError);

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "admission request: {}", self.0)
    }
}

impl std::error::Error for RequestError {}

impl From<FieldError> for RequestError {
    fn from(error: FieldError) -> Self {
        Self(error)
    }
}

fn text<'a>(field: &Field<'a>) -> Result<Cow<'a, str>, FieldError> {
    field.string().map(Option::unwrap_or_default)
}

impl<'a> Payload<'a> {
    /// Reads a `validate` payload.
    pub fn parse(bytes: &'a [u8]) -> Result<Self, RequestError> {
        let json = Json::parse_lazy(bytes).map_err(|error| FieldError::Malformed {
            path: FieldPath::root(),
            error,
        })?;
        let envelope = Field::new(FieldPath::root(), Some(json)).object()?;
        // The settings follow the request; reading them from the end of the
        // payload spares a pass over the whole request.
        let settings = match last_member(bytes) {
            Some((key, value)) if key_equals(key, "settings") => Some(value),
            _ => envelope.field("settings")?.json(),
        };
        let request = envelope.field("request")?.required()?;
        Ok(Self {
            request: Request::from_field(&request)?,
            settings,
        })
    }
}

impl<'a> Request<'a> {
    fn from_field(request: &Field<'a>) -> Result<Self, FieldError> {
        let members = request.object()?;
        let operation_field = members.field("operation")?;
        let operation_text = operation_field.required_string()?;
        let operation = Operation::parse(&operation_text).ok_or_else(|| FieldError::WrongType {
            path: operation_field.path().clone(),
            expected: "one of CREATE, UPDATE, DELETE, CONNECT",
            found: crate::json::Kind::String,
        })?;
        let kind = members.field("kind")?.object()?;
        let user_info = members.field("userInfo")?.object()?;
        let groups = user_info
            .field("groups")?
            .items()?
            .iter()
            .map(text)
            .collect::<Result<_, _>>()?;
        let mut request = Self {
            operation,
            group: text(&kind.field("group")?)?,
            kind: text(&kind.field("kind")?)?,
            resource: text(&members.field("resource")?.object()?.field("resource")?)?,
            name: text(&members.field("name")?)?,
            namespace: text(&members.field("namespace")?)?,
            user: User {
                username: text(&user_info.field("username")?)?,
                groups,
            },
            members,
        };
        if request.name.is_empty() {
            // A malformed object is the rule's business; the name is only a
            // fallback here.
            let name = request
                .subject()
                .and_then(|s| s.at("metadata.name")?.string());
            request.name = name.ok().flatten().unwrap_or_default();
        }
        Ok(request)
    }

    /// `object`, with paths relative to the object (`spec.x`, not
    /// `request.object.spec.x`); absent on DELETE.
    pub fn object(&self) -> Result<Field<'a>, FieldError> {
        Ok(Field::new(
            FieldPath::root(),
            self.members.field("object")?.json(),
        ))
    }

    /// `oldObject`, with paths relative to the object; present on UPDATE and
    /// DELETE.
    pub fn old_object(&self) -> Result<Field<'a>, FieldError> {
        Ok(Field::new(
            FieldPath::root(),
            self.members.field("oldObject")?.json(),
        ))
    }

    /// The object the request is about: `oldObject` on DELETE, else `object`.
    pub fn subject(&self) -> Result<Field<'a>, FieldError> {
        if self.operation == Operation::Delete {
            self.old_object()
        } else {
            self.object()
        }
    }

    /// The resource as kubectl names it unambiguously: `configmaps`,
    /// `postgreses.apps.cozystack.io`.
    pub fn kubectl_resource(&self) -> String {
        let resource = if self.resource.is_empty() {
            self.kind.to_lowercase()
        } else {
            self.resource.to_string()
        };
        if self.group.is_empty() {
            resource
        } else {
            format!("{resource}.{}", self.group)
        }
    }

    /// `--namespace <ns> ` for kubectl commands, empty when cluster-scoped.
    pub fn kubectl_namespace_flag(&self) -> String {
        if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" --namespace {}", self.namespace)
        }
    }

    /// `Kind namespace/name` for messages.
    pub fn describe(&self) -> String {
        if self.namespace.is_empty() {
            format!("{} {}", self.kind, self.name)
        } else {
            format!("{} {}/{}", self.kind, self.namespace, self.name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DELETE: &str = r#"{"settings": {"x": 1}, "request": {
        "uid": "u", "kind": {"group": "apps.cozystack.io", "version": "v1alpha1", "kind": "Postgres"},
        "resource": {"group": "apps.cozystack.io", "version": "v1alpha1", "resource": "postgreses"},
        "namespace": "tenant-foo", "operation": "DELETE",
        "userInfo": {"username": "alice", "groups": ["g1", "system:authenticated"]},
        "object": null, "oldObject": {"metadata": {"name": "db"}, "spec": {"storageClass": "local"}}}}"#;

    #[test]
    fn reads_what_rules_need() {
        let payload = Payload::parse(DELETE.as_bytes()).unwrap();
        let request = payload.request;
        assert_eq!(request.operation, Operation::Delete);
        assert_eq!(request.kind, "Postgres");
        assert_eq!(request.name, "db", "falls back to oldObject.metadata.name");
        assert_eq!(request.user.groups, vec!["g1", "system:authenticated"]);
        assert!(!request.object().unwrap().is_present());
        let class = request.subject().unwrap().at("spec.storageClass").unwrap();
        assert_eq!(class.path().as_str(), "spec.storageClass");
        assert_eq!(class.string().unwrap().unwrap(), "local");
        assert_eq!(request.kubectl_resource(), "postgreses.apps.cozystack.io");
        assert_eq!(request.describe(), "Postgres tenant-foo/db");
        assert_eq!(payload.settings.unwrap().raw(), b"{\"x\": 1}");
        let settings_first = DELETE
            .replacen("{\"settings\": {\"x\": 1}, ", "{", 1)
            .replacen("}}}}", "}}}, \"settings\": {\"y\": 2}}", 1);
        let payload = Payload::parse(settings_first.as_bytes()).unwrap();
        assert_eq!(payload.settings.unwrap().raw(), b"{\"y\": 2}");
    }

    #[test]
    fn names_the_broken_field() {
        let broken = DELETE.replace("\"DELETE\"", "\"PATCH\"");
        let error = Payload::parse(broken.as_bytes()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "admission request: request.operation must be one of CREATE, UPDATE, DELETE, CONNECT, not a string"
        );
        let broken = DELETE.replace("[\"g1\"", "[1");
        assert!(
            Payload::parse(broken.as_bytes())
                .unwrap_err()
                .to_string()
                .contains("request.userInfo.groups[0]")
        );
        assert!(
            Payload::parse(b"{}")
                .unwrap_err()
                .to_string()
                .contains("request is required")
        );
        assert!(Payload::parse(b"not json").is_err());
    }
}
