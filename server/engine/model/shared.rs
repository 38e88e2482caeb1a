//! An immutable string whose copies share one allocation: the cluster name, namespace and API
//! version that thousands of tracked objects repeat. The collector's snapshot interns them, so
//! each distinct value is held once however many objects carry it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SharedStr(Arc<str>);

impl SharedStr {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether another copy holds the same allocation (an interner drops what only it holds).
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }
}

impl Default for SharedStr {
    fn default() -> Self {
        SharedStr::from("")
    }
}

impl Deref for SharedStr {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for SharedStr {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for SharedStr {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for SharedStr {
    fn from(text: &str) -> Self {
        SharedStr(Arc::from(text))
    }
}

impl From<String> for SharedStr {
    fn from(text: String) -> Self {
        SharedStr(Arc::from(text))
    }
}

impl From<&String> for SharedStr {
    fn from(text: &String) -> Self {
        SharedStr::from(text.as_str())
    }
}

impl From<SharedStr> for String {
    fn from(text: SharedStr) -> Self {
        text.as_str().to_string()
    }
}

impl PartialEq<str> for SharedStr {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for SharedStr {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for SharedStr {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<SharedStr> for str {
    fn eq(&self, other: &SharedStr) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<SharedStr> for &str {
    fn eq(&self, other: &SharedStr) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<SharedStr> for String {
    fn eq(&self, other: &SharedStr) -> bool {
        self == other.as_str()
    }
}

impl fmt::Debug for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl Serialize for SharedStr {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(SharedStr::from)
    }
}

/// This thread's shared copy of `text`: the texts that objects repeat (cluster, namespace, API
/// version, condition types and reasons) cost one allocation per thread, not one per object,
/// when the reader turns 100,000 objects into slim ones on every core.
pub fn shared(text: &str) -> SharedStr {
    thread_local! {
        static TEXTS: RefCell<Interner> = RefCell::default();
    }
    TEXTS.with_borrow_mut(|texts| texts.intern_str(text))
}

/// Hands out one shared copy of each distinct string. Copies no object holds any more are
/// dropped now and then (when the set has doubled since), so names that went away do not pile up.
#[derive(Debug, Default)]
pub struct Interner {
    held: HashSet<SharedStr>,
    /// How many were held after the last sweep.
    swept_at: usize,
}

impl Interner {
    /// The shared copy of `text`, which becomes it when the text is new.
    pub fn intern(&mut self, text: &SharedStr) -> SharedStr {
        match self.held.get(text.as_str()) {
            Some(held) => held.clone(),
            None => self.hold(text.clone()),
        }
    }

    /// The shared copy of `text`, allocated only when the text is new.
    pub fn intern_str(&mut self, text: &str) -> SharedStr {
        match self.held.get(text) {
            Some(held) => held.clone(),
            None => self.hold(SharedStr::from(text)),
        }
    }

    fn hold(&mut self, text: SharedStr) -> SharedStr {
        if self.held.len() >= (2 * self.swept_at).max(1024) {
            self.held.retain(SharedStr::is_shared);
            self.swept_at = self.held.len();
        }
        self.held.insert(text.clone());
        text
    }

    pub fn len(&self) -> usize {
        self.held.len()
    }

    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interner_holds_what_it_interned() {
        let mut names = Interner::default();
        assert!(names.is_empty());
        let prod = names.intern_str("prod");
        assert!(!names.is_empty());
        assert_eq!(names.len(), 1);
        assert_eq!(names.intern_str("prod"), prod);
    }

    /// Names nobody else holds are dropped at a sweep, and sweeps come only once the set has
    /// doubled since the last (at least 1,024), so interning stays cheap.
    #[test]
    fn unheld_names_are_swept_once_the_set_has_doubled() {
        let mut names = Interner::default();
        drop(names.intern_str("gone"));
        assert_eq!(names.len(), 1, "no sweep below 1,024");
        let held: Vec<SharedStr> = (0..1_100)
            .map(|i| names.intern_str(&format!("n{i}")))
            .collect();
        assert_eq!(
            names.len(),
            1_100,
            "\"gone\" swept at 1,024, every held name kept"
        );
        for i in 0..10 {
            drop(names.intern_str(&format!("passing{i}")));
        }
        assert_eq!(names.len(), 1_110, "the next sweep waits for 2,048");
        drop(held);
    }

    /// Equal to its text, and only to it, whichever side and form the text is on.
    #[test]
    fn equals_its_text_in_every_form_and_direction() {
        let shared = SharedStr::from(&"Ready".to_string());
        let (same, other) = ("Ready", "Stalled");
        let (same_owned, other_owned) = (same.to_string(), other.to_string());
        assert!(shared == *same && shared != *other);
        assert!(shared == same_owned && shared != other_owned);
        assert!(*same == shared && *other != shared);
        assert!(same == shared && other != shared);
        assert!(same_owned == shared && other_owned != shared);
        assert_eq!(String::from(shared), "Ready");
    }

    #[test]
    fn compares_hashes_and_reads_like_the_text_it_holds() {
        let a = SharedStr::from("prod-eu-1");
        let copy = a.clone();
        assert!(a.is_shared(), "a clone shares the allocation");
        assert_eq!(a, "prod-eu-1");
        assert_eq!("prod-eu-1".to_string(), a);
        assert_eq!(format!("{a}/{a:?}"), "prod-eu-1/\"prod-eu-1\"");
        let set: std::collections::HashSet<SharedStr> = [copy].into();
        assert!(set.contains("prod-eu-1"), "looked up by &str");
        let json = serde_json::to_value(&a).unwrap();
        assert_eq!(json, serde_json::json!("prod-eu-1"));
        assert_eq!(serde_json::from_value::<SharedStr>(json).unwrap(), a);
        drop(set);
        assert!(!a.is_shared());
    }
}

#[cfg(test)]
mod interner_tests {
    use super::*;

    #[test]
    fn equal_texts_come_back_as_one_allocation_and_unused_ones_are_swept() {
        let mut names = Interner::default();
        let first = names.intern(&SharedStr::from("team-1"));
        let second = names.intern(&SharedStr::from("team-1"));
        assert!(std::ptr::eq(first.as_str(), second.as_str()));
        assert_eq!(names.len(), 1);
        drop((first, second));
        // Nothing holds "team-1" now; it goes in the sweep the set's growth triggers.
        let kept: Vec<SharedStr> = (0..1100)
            .map(|i| names.intern(&SharedStr::from(format!("ns-{i}"))))
            .collect();
        assert_eq!(names.len(), kept.len());
        assert!(!names.held.contains("team-1"));
    }

    #[test]
    fn a_text_given_as_str_is_the_copy_held_for_it() {
        let mut names = Interner::default();
        let held = names.intern(&SharedStr::from("team-1"));
        let again = names.intern_str("team-1");
        assert!(std::ptr::eq(held.as_str(), again.as_str()));
        let new = names.intern_str("team-2");
        assert_eq!(new, "team-2");
        assert!(std::ptr::eq(
            new.as_str(),
            names.intern_str("team-2").as_str()
        ));
        assert_eq!(names.len(), 2);
    }
}
