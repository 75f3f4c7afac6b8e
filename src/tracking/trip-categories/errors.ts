import { defineErrors } from '../../platform/http/errors.js';

export const TripCategoryErrors = defineErrors('trip_category', {
  own_parent: [400, 'A category cannot be its own parent'],
  unknown_parent: [400, 'parent_id does not name an existing trip category'],
  parent_cycle: [400, 'parent_id would make the category an ancestor of itself'],
  not_found: [404, 'Trip category not found'],
});
