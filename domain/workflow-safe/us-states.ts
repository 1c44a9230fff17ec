// US states, DC, territories and military "states", by USPS code and by name.
export const US_STATES: Record<string, string> = {
  AL: 'Alabama',
  AK: 'Alaska',
  AZ: 'Arizona',
  AR: 'Arkansas',
  CA: 'California',
  CO: 'Colorado',
  CT: 'Connecticut',
  DE: 'Delaware',
  FL: 'Florida',
  GA: 'Georgia',
  HI: 'Hawaii',
  ID: 'Idaho',
  IL: 'Illinois',
  IN: 'Indiana',
  IA: 'Iowa',
  KS: 'Kansas',
  KY: 'Kentucky',
  LA: 'Louisiana',
  ME: 'Maine',
  MD: 'Maryland',
  MA: 'Massachusetts',
  MI: 'Michigan',
  MN: 'Minnesota',
  MS: 'Mississippi',
  MO: 'Missouri',
  MT: 'Montana',
  NE: 'Nebraska',
  NV: 'Nevada',
  NH: 'New Hampshire',
  NJ: 'New Jersey',
  NM: 'New Mexico',
  NY: 'New York',
  NC: 'North Carolina',
  ND: 'North Dakota',
  OH: 'Ohio',
  OK: 'Oklahoma',
  OR: 'Oregon',
  PA: 'Pennsylvania',
  RI: 'Rhode Island',
  SC: 'South Carolina',
  SD: 'South Dakota',
  TN: 'Tennessee',
  TX: 'Texas',
  UT: 'Utah',
  VT: 'Vermont',
  VA: 'Virginia',
  WA: 'Washington',
  WV: 'West Virginia',
  WI: 'Wisconsin',
  WY: 'Wyoming',
  DC: 'District of Columbia',
  // Territories and freely associated states served by USPS
  AS: 'American Samoa',
  GU: 'Guam',
  MP: 'Northern Mariana Islands',
  PR: 'Puerto Rico',
  VI: 'U.S. Virgin Islands',
  UM: 'U.S. Minor Outlying Islands',
  FM: 'Federated States of Micronesia',
  MH: 'Marshall Islands',
  PW: 'Palau',
  // Military
  AA: 'Armed Forces Americas',
  AE: 'Armed Forces Europe',
  AP: 'Armed Forces Pacific',
};

const NAME_ALIASES: Record<string, string> = {
  'washington dc': 'DC',
  'washington d.c.': 'DC',
  'd.c.': 'DC',
  'virgin islands': 'VI',
  'us virgin islands': 'VI',
  'united states virgin islands': 'VI',
  micronesia: 'FM',
  'armed forces africa': 'AE',
  'armed forces canada': 'AE',
  'armed forces middle east': 'AE',
};

const BY_NAME: Record<string, string> = Object.fromEntries([
  ...Object.entries(US_STATES).map(([code, name]) => [normaliseName(name), code]),
  ...Object.entries(NAME_ALIASES).map(([name, code]) => [normaliseName(name), code]),
]);

function normaliseName(s: string): string {
  return s.toLowerCase().replace(/\./g, '').replace(/\s+/g, ' ').trim();
}

export function isStateCode(code: string): boolean {
  return Object.prototype.hasOwnProperty.call(US_STATES, code);
}

/** A two-letter code from a code or a full name (any case); null when unknown. */
export function toStateCode(value: string): string | null {
  const trimmed = value.trim();
  if (/^[A-Za-z]{2}$/.test(trimmed) && isStateCode(trimmed.toUpperCase())) return trimmed.toUpperCase();
  return BY_NAME[normaliseName(trimmed)] ?? BY_NAME[normaliseName(trimmed.replace(/\./g, ''))] ?? null;
}

export const ZIP_PATTERN = /^\d{5}(-\d{4})?$/;
