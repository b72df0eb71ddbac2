//! Loss of an explicit list of arrival indices (ns-2's `ErrorModel/List` with `droplist`,
//! `queue/errmodel.cc`: 0-based packet count, any order, no duplicates).

use super::error::LossModelError;

/// The state of a list model: the indices sorted ascending, a cursor at the next one not yet
/// reached, and the index of the next arrival. Each packet costs O(1): no search, no allocation.
#[derive(Clone, Debug)]
pub(super) struct List {
    indices: Vec<u64>,
    cursor: usize,
    next_index: u64,
}

impl List {
    /// A model dropping exactly the arrivals whose 0-based index is in `indices` (any order).
    pub(super) fn new(indices: &[u64]) -> List {
        let mut indices = indices.to_vec();
        indices.sort_unstable();
        indices.dedup();
        List {
            indices,
            cursor: 0,
            next_index: 0,
        }
    }

    /// Counts one arrival and says whether its index is listed. Draws nothing.
    pub(super) fn should_drop(&mut self) -> bool {
        let n = self.next_index;
        self.next_index += 1;
        // Indices are distinct and n grows by one per call, so the cursor's index is never
        // below n: it is either this arrival or a later one.
        if self.indices.get(self.cursor) == Some(&n) {
            self.cursor += 1;
            true
        } else {
            false
        }
    }
}

/// No index may appear twice.
pub(super) fn validate(indices: &[u64]) -> Result<(), LossModelError> {
    let mut sorted = indices.to_vec();
    sorted.sort_unstable();
    match sorted.windows(2).find(|pair| pair[0] == pair[1]) {
        Some(pair) => Err(LossModelError::DuplicateIndex { index: pair[0] }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_exactly_the_listed_indices_given_in_any_order() {
        let mut model = List::new(&[7, 0, 3, 1_000]);
        let dropped: Vec<u64> = (0..20).filter(|_| model.should_drop()).collect();
        assert_eq!(dropped, vec![0, 3, 7]);
    }

    #[test]
    fn an_empty_list_drops_nothing() {
        let mut model = List::new(&[]);
        assert!((0..100).all(|_| !model.should_drop()));
    }

    #[test]
    fn duplicates_are_refused() {
        assert_eq!(
            validate(&[4, 2, 4]),
            Err(LossModelError::DuplicateIndex { index: 4 })
        );
        assert!(validate(&[4, 2, 3]).is_ok());
    }
}
