//! A group of fields most objects leave empty, boxed only when one of them is set: a
//! Deployment or a Pod carries eight bytes for the Flux fields instead of their room. Reads see
//! the empty value when nothing is held, so the fields read the same as if they were inline.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::ops::Deref;

/// A type with an empty value to read when nothing is boxed.
pub trait Empty: Default + PartialEq + 'static {
    const EMPTY: &'static Self;
}

pub struct Sparse<T>(Option<Box<T>>);

impl<T: Empty> Sparse<T> {
    /// Boxes the value unless it is empty.
    pub fn new(value: T) -> Self {
        Sparse((value != *T::EMPTY).then(|| Box::new(value)))
    }

    /// The fields to write, boxed on first use (set them to non-empty values: an emptied box
    /// still reads and compares as empty, it only keeps its room).
    pub fn to_mut(&mut self) -> &mut T {
        self.0.get_or_insert_default()
    }
}

impl<T: Empty> Deref for Sparse<T> {
    type Target = T;

    fn deref(&self) -> &T {
        self.0.as_deref().unwrap_or(T::EMPTY)
    }
}

impl<T> Default for Sparse<T> {
    fn default() -> Self {
        Sparse(None)
    }
}

impl<T: Clone> Clone for Sparse<T> {
    fn clone(&self) -> Self {
        Sparse(self.0.clone())
    }
}

/// Equal when the fields read equal, whether or not an empty value is boxed.
impl<T: Empty> PartialEq for Sparse<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl<T: Empty + Eq> Eq for Sparse<T> {}

impl<T: Empty + fmt::Debug> fmt::Debug for Sparse<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&**self, f)
    }
}

impl<T: Empty + Serialize> Serialize for Sparse<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

impl<'de, T: Empty + Deserialize<'de>> Deserialize<'de> for Sparse<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Sparse::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Extra {
        names: Vec<String>,
    }

    impl Empty for Extra {
        const EMPTY: &'static Self = &Extra { names: Vec::new() };
    }

    #[test]
    fn a_sparse_value_prints_as_the_value_it_holds() {
        let names = vec!["a".to_string()];
        let held = Sparse::new(Extra { names });
        assert_eq!(format!("{held:?}"), r#"Extra { names: ["a"] }"#);
    }

    #[test]
    fn holds_nothing_for_the_empty_value_and_reads_the_same_either_way() {
        let empty = Sparse::new(Extra::default());
        assert!(empty.0.is_none());
        assert!(empty.names.is_empty());
        let set = Sparse::new(Extra {
            names: vec!["a".into()],
        });
        assert_eq!(set.names, ["a"]);
        let mut emptied = Sparse::new(Extra {
            names: vec!["a".into()],
        });
        emptied.to_mut().names.clear();
        assert_eq!(emptied, empty, "compared by what they read");
        assert_ne!(set, empty);
    }
}
