/** The 16 localized name fields, in the spec's order. */
export const NAME_FIELDS = [
  'name_ar',
  'name_en',
  'name_ch',
  'name_fr',
  'name_ur',
  'name_fa',
  'name_sp',
  'name_de',
  'name_it',
  'name_uk',
  'name_hi',
  'name_id',
  'name_ru',
  'name_pt',
  'name_ms',
  'name_tr',
] as const;

export type NameField = (typeof NAME_FIELDS)[number];

/** All 22 fields of a city record, in the order every answer carries them. */
export const CITY_FIELDS = ['id', ...NAME_FIELDS, 'longitude', 'latitude', 'top', 'created_at', 'updated_at'] as const;

export type CityField = (typeof CITY_FIELDS)[number];

export type City = { id: number } & Record<NameField, string> & {
    longitude: number | null;
    latitude: number | null;
    top: boolean;
    /** Always `YYYY-MM-DDTHH:MM:SS.ffffffZ` (kept as text: a Date would drop microseconds). */
    created_at: string;
    updated_at: string;
  };

/** The ICU locale each name field is collated with in `locale` collation. */
export const FIELD_LOCALES: Readonly<Record<NameField, string>> = {
  name_ar: 'ar',
  name_en: 'en',
  name_ch: 'zh',
  name_fr: 'fr',
  name_ur: 'ur',
  name_fa: 'fa',
  name_sp: 'es',
  name_de: 'de',
  name_it: 'it',
  name_uk: 'uk',
  name_hi: 'hi',
  name_id: 'id',
  name_ru: 'ru',
  name_pt: 'pt',
  name_ms: 'ms',
  name_tr: 'tr',
};

export const MAX_NAME_LENGTH = 255;

/**
 * The most bytes one record of a dataset file may take: a city is at most about 50 KiB (16 names
 * of 255 characters, even spelled as JSON \u escapes); anything longer is not a city dataset
 * (a file with no line breaks, a device), and reading stops there instead of holding it all.
 */
export const MAX_RECORD_BYTES = 1024 * 1024;

export function isNameField(value: string): value is NameField {
  return (NAME_FIELDS as readonly string[]).includes(value);
}
