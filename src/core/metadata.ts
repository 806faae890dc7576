import { MAX_NAME_LENGTH, NAME_FIELDS } from './fields.js';
import { ROUTES } from './route-table.js';
import { COORDINATE_LIMITS, MAX_DECIMALS, MAX_DIGITS } from './validate-record.js';

const label = (field: string) =>
  field === 'id' ? 'ID' : field[0]!.toUpperCase() + field.slice(1).replaceAll('_', ' ');

/**
 * The OPTIONS answer, as DRF's SimpleMetadata describes the reference's ListCreateAPIView
 * (coordinates also state the limits this server enforces).
 */
export function optionsMetadata(): object {
  const field = (name: string, type: string, required: boolean, readOnly: boolean, extra: object = {}) => [
    name,
    { type, required, read_only: readOnly, label: label(name), ...extra },
  ];
  const coordinate = (name: keyof typeof COORDINATE_LIMITS) =>
    field(name, 'decimal', false, false, {
      min_value: -COORDINATE_LIMITS[name],
      max_value: COORDINATE_LIMITS[name],
      max_digits: MAX_DIGITS,
      decimal_places: MAX_DECIMALS,
    });
  return {
    name: 'City List',
    description: '',
    renders: [ROUTES.mediaType.json, ROUTES.mediaType.html],
    parses: [ROUTES.mediaType.json, ROUTES.mediaType.form, ROUTES.mediaType.multipart],
    actions: {
      POST: Object.fromEntries([
        field('id', 'integer', false, true),
        ...NAME_FIELDS.map((name) => field(name, 'string', true, false, { max_length: MAX_NAME_LENGTH })),
        coordinate('longitude'),
        coordinate('latitude'),
        field('top', 'boolean', false, false),
        field('created_at', 'datetime', false, true),
        field('updated_at', 'datetime', false, true),
      ]),
    },
  };
}
