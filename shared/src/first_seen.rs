//! The first entry under each key of a list, and the first one under that
//! key with another tag: enough to answer "the earliest earlier entry with
//! this key but not this tag" in one lookup. Rules asked it by scanning
//! every earlier entry, which made a long list quadratic and a hostile one
//! run past policy-server's deadline.

use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

/// Entries recorded in list order. A `BTreeMap`: in a module it weighs no
/// more than a `HashMap` and needs no random seed.
#[derive(Debug)]
pub struct FirstSeen<K, T, V> {
    keys: BTreeMap<K, Firsts<T, V>>,
}

#[derive(Debug)]
struct Firsts<T, V> {
    /// The first entry's tag and value.
    tag: T,
    value: V,
    /// The first value whose tag differs from `tag`.
    other: Option<V>,
}

impl<K: Ord, T: PartialEq, V: Copy> Default for FirstSeen<K, T, V> {
    fn default() -> Self {
        Self {
            keys: BTreeMap::new(),
        }
    }
}

impl<K: Ord, T: PartialEq, V: Copy> FirstSeen<K, T, V> {
    /// Records an entry; call it in list order, so that "first" means
    /// earliest.
    pub fn insert(&mut self, key: K, tag: T, value: V) {
        match self.keys.entry(key) {
            Entry::Vacant(slot) => {
                slot.insert(Firsts {
                    tag,
                    value,
                    other: None,
                });
            }
            Entry::Occupied(mut slot) => {
                let firsts = slot.get_mut();
                if firsts.other.is_none() && firsts.tag != tag {
                    firsts.other = Some(value);
                }
            }
        }
    }

    /// The first value recorded under `key`, whatever its tag.
    pub fn first<Q>(&self, key: &Q) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        self.keys.get(key).map(|firsts| firsts.value)
    }

    /// The first value recorded under `key` with a tag other than `tag`.
    pub fn first_other<Q>(&self, key: &Q, tag: &T) -> Option<V>
    where
        K: Borrow<Q>,
        Q: Ord + ?Sized,
    {
        let firsts = self.keys.get(key)?;
        if firsts.tag == *tag {
            firsts.other
        } else {
            Some(firsts.value)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::FirstSeen;

    fn seen(entries: &[(&'static str, char)]) -> FirstSeen<&'static str, char, usize> {
        let mut seen = FirstSeen::default();
        for (index, &(key, tag)) in entries.iter().enumerate() {
            seen.insert(key, tag, index);
        }
        seen
    }

    #[test]
    fn first_is_the_earliest_entry_of_a_key() {
        let seen = seen(&[("a", 'x'), ("b", 'y'), ("a", 'y'), ("a", 'x')]);
        assert_eq!(seen.first("a"), Some(0));
        assert_eq!(seen.first("b"), Some(1));
        assert_eq!(seen.first("c"), None);
    }

    #[test]
    fn first_other_skips_entries_with_the_same_tag() {
        let seen = seen(&[("a", 'x'), ("a", 'x'), ("a", 'y'), ("a", 'z'), ("b", 'y')]);
        assert_eq!(seen.first_other("a", &'y'), Some(0));
        assert_eq!(seen.first_other("a", &'x'), Some(2));
        assert_eq!(seen.first_other("b", &'y'), None);
        assert_eq!(seen.first_other("b", &'x'), Some(4));
        assert_eq!(seen.first_other("c", &'x'), None);
    }
}
