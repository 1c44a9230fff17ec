// The offline US address check against real public addresses written many ways: the
// USPS form of each line, the changes it reports, the deliverability verdict and the
// warnings, plus the ZIP directory's coverage and the dry-run warning lines.
import {
  addressCheckWarnings,
  checkUsAddress,
  type AddressCheckInput,
  type AddressWarningCode,
} from '../../domain/outbound-mail/address-check';
import {
  DIRECTIONALS,
  STREET_SUFFIXES,
  UNIT_DESIGNATORS_ALONE,
  UNIT_DESIGNATORS_WITH_NUMBER,
} from '../../domain/outbound-mail/usps-publication-28';
import { lookupZip, zipCountsByState } from '../../domain/outbound-mail/zip-directory';

interface Row {
  name: string;
  input: AddressCheckInput;
  /** line1, line2 (null when none), city, state, zip. */
  out: [string, string | null, string, string, string];
  /** [field, from, to] in field order. */
  changes?: Array<[string, string, string]>;
  deliverability: 'likely' | 'doubtful' | 'unknown';
  warnings?: AddressWarningCode[];
}

const a = (
  line1: string,
  city: string,
  state: string,
  zip: string,
  more: Partial<AddressCheckInput> = {},
): AddressCheckInput => ({ line1, city, state, zip, ...more });

const ROWS: Row[] = [
  // ---- clean and messy writing of consistent addresses ----
  {
    name: 'White House, as commonly written',
    input: a('1600 Pennsylvania Ave NW', 'Washington', 'DC', '20500'),
    out: ['1600 PENNSYLVANIA AVE NW', null, 'WASHINGTON', 'DC', '20500'],
    deliverability: 'likely',
  },
  {
    name: 'White House, words spelled out',
    input: a('1600 Pennsylvania Avenue Northwest', 'Washington', 'District of Columbia', '20500'),
    out: ['1600 PENNSYLVANIA AVE NW', null, 'WASHINGTON', 'DC', '20500'],
    changes: [
      ['line1', 'Avenue', 'AVE'],
      ['line1', 'Northwest', 'NW'],
      ['state', 'District of Columbia', 'DC'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'White House, lower case with periods, D.C. in the city and a ZIP+4 without hyphen',
    input: a('1600 pennsylvania ave. n.w.', 'washington, d.c.', 'dc', '205000003'),
    out: ['1600 PENNSYLVANIA AVE NW', null, 'WASHINGTON', 'DC', '20500-0003'],
    changes: [
      ['line1', 'ave.', 'AVE'],
      ['line1', 'n.w.', 'NW'],
      ['city', 'washington, d.c.', 'WASHINGTON'],
      ['zip', '205000003', '20500-0003'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Empire State Building with a suite on line2 and the state name',
    input: a('350 Fifth Avenue', 'New York', 'New York', '10118', { line2: 'Suite 3304' }),
    out: ['350 FIFTH AVE', 'STE 3304', 'NEW YORK', 'NY', '10118'],
    changes: [
      ['line1', 'Avenue', 'AVE'],
      ['line2', 'Suite', 'STE'],
      ['state', 'New York', 'NY'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Empire State Building: building name on line1, street on line2 (lines are not swapped)',
    input: a('Empire State Building', 'New York', 'NY', '10118', { line2: '350 5th Ave.' }),
    out: ['EMPIRE STATE BUILDING', '350 5TH AVE', 'NEW YORK', 'NY', '10118'],
    changes: [['line2', 'Ave.', 'AVE']],
    deliverability: 'likely',
  },
  {
    name: 'Extra spaces everywhere and a ZIP+4 with a space',
    input: a('  350   Fifth    Avenue ', '  New   York ', ' ny ', ' 10118 3299 '),
    out: ['350 FIFTH AVE', null, 'NEW YORK', 'NY', '10118-3299'],
    changes: [
      ['line1', 'Avenue', 'AVE'],
      ['zip', '10118 3299', '10118-3299'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Avenue of the Americas keeps its AVENUE (not in suffix position)',
    input: a('1211 Avenue of the Americas', 'New York', 'NY', '10036'),
    out: ['1211 AVENUE OF THE AMERICAS', null, 'NEW YORK', 'NY', '10036'],
    deliverability: 'likely',
  },
  {
    name: 'Radio City: Avenue of the Americas with a floor',
    input: a('1260 Avenue of the Americas, Floor 5', 'New York', 'NY', '10020'),
    out: ['1260 AVENUE OF THE AMERICAS FL 5', null, 'NEW YORK', 'NY', '10020'],
    changes: [
      ['line1', 'Americas,', 'AMERICAS'],
      ['line1', 'Floor', 'FL'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Rockefeller Plaza',
    input: a('30 Rockefeller Plaza', 'New York', 'NY', '10112'),
    out: ['30 ROCKEFELLER PLZ', null, 'NEW YORK', 'NY', '10112'],
    changes: [['line1', 'Plaza', 'PLZ']],
    deliverability: 'likely',
  },
  {
    name: 'Lincoln Center: only the last suffix word is abbreviated',
    input: a('10 Lincoln Center Plaza', 'New York', 'NY', '10023'),
    out: ['10 LINCOLN CENTER PLZ', null, 'NEW YORK', 'NY', '10023'],
    changes: [['line1', 'Plaza', 'PLZ']],
    deliverability: 'likely',
  },
  {
    name: 'Natural History Museum: a post-directional after PARK',
    input: a('200 Central Park West', 'New York', 'NY', '10024'),
    out: ['200 CENTRAL PARK W', null, 'NEW YORK', 'NY', '10024'],
    changes: [['line1', 'West', 'W']],
    deliverability: 'likely',
  },
  {
    name: 'Park Avenue South with a pound-sign apartment after a comma',
    input: a('230 Park Avenue South, #12B', 'New York', 'NY', '10003'),
    out: ['230 PARK AVE S # 12B', null, 'NEW YORK', 'NY', '10003'],
    changes: [
      ['line1', 'Avenue', 'AVE'],
      ['line1', 'South,', 'S'],
      ['line1', '#12B', '# 12B'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Brooklyn Avenue N: a lone suffix word and a letter name stay as they are',
    input: a('1000 Avenue N', 'Brooklyn', 'NY', '11230'),
    out: ['1000 AVENUE N', null, 'BROOKLYN', 'NY', '11230'],
    deliverability: 'likely',
  },
  {
    name: 'Metropolitan Museum, lower case',
    input: a('1000 fifth avenue', 'new york', 'ny', '10028'),
    out: ['1000 FIFTH AVE', null, 'NEW YORK', 'NY', '10028'],
    changes: [['line1', 'avenue', 'AVE']],
    deliverability: 'likely',
  },
  {
    name: 'Willis Tower: pre-directional with a period, suffix with a comma, a floor',
    input: a('233 S. Wacker Drive, Floor 103', 'Chicago', 'IL', '60606'),
    out: ['233 S WACKER DR FL 103', null, 'CHICAGO', 'IL', '60606'],
    changes: [
      ['line1', 'S.', 'S'],
      ['line1', 'Drive,', 'DR'],
      ['line1', 'Floor', 'FL'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Art Institute of Chicago: directional word before the name',
    input: a('111 South Michigan Avenue', 'Chicago', 'IL', '60603'),
    out: ['111 S MICHIGAN AVE', null, 'CHICAGO', 'IL', '60603'],
    changes: [
      ['line1', 'South', 'S'],
      ['line1', 'Avenue', 'AVE'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Field Museum: multi-word name, abbreviations with periods',
    input: a('1400 S. Lake Shore Dr.', 'Chicago', 'IL', '60605'),
    out: ['1400 S LAKE SHORE DR', null, 'CHICAGO', 'IL', '60605'],
    changes: [
      ['line1', 'S.', 'S'],
      ['line1', 'Dr.', 'DR'],
    ],
    deliverability: 'likely',
  },
  {
    name: "Gateway Arch: N 4th St and St. Louis against the directory's SAINT LOUIS",
    input: a('11 North 4th Street', 'St. Louis', 'MO', '63102'),
    out: ['11 N 4TH ST', null, 'ST LOUIS', 'MO', '63102'],
    changes: [
      ['line1', 'North', 'N'],
      ['line1', 'Street', 'ST'],
      ['city', 'St. Louis', 'ST LOUIS'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Gateway Arch with Saint spelled out',
    input: a('11 N 4th St', 'Saint Louis', 'MO', '63102'),
    out: ['11 N 4TH ST', null, 'SAINT LOUIS', 'MO', '63102'],
    deliverability: 'likely',
  },
  {
    name: 'Graceland: Boulevard',
    input: a('3764 Elvis Presley Boulevard', 'Memphis', 'TN', '38116'),
    out: ['3764 ELVIS PRESLEY BLVD', null, 'MEMPHIS', 'TN', '38116'],
    changes: [['line1', 'Boulevard', 'BLVD']],
    deliverability: 'likely',
  },
  {
    name: 'Space Center Houston: a common variant (PKY) to the standard PKWY',
    input: a('1601 NASA Pky', 'Houston', 'TX', '77058'),
    out: ['1601 NASA PKWY', null, 'HOUSTON', 'TX', '77058'],
    changes: [['line1', 'Pky', 'PKWY']],
    deliverability: 'likely',
  },
  {
    name: 'Griffith Observatory: directional word and Road',
    input: a('2800 East Observatory Road', 'Los Angeles', 'CA', '90027'),
    out: ['2800 E OBSERVATORY RD', null, 'LOS ANGELES', 'CA', '90027'],
    changes: [
      ['line1', 'East', 'E'],
      ['line1', 'Road', 'RD'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Hollywood Bowl written with AV (a C1 variant of AVE)',
    input: a('2301 N Highland Av', 'Los Angeles', 'CA', '90068'),
    out: ['2301 N HIGHLAND AVE', null, 'LOS ANGELES', 'CA', '90068'],
    changes: [['line1', 'Av', 'AVE']],
    deliverability: 'likely',
  },
  {
    name: 'Space Needle: STR (a C1 variant of ST)',
    input: a('400 Broad Str', 'Seattle', 'WA', '98109'),
    out: ['400 BROAD ST', null, 'SEATTLE', 'WA', '98109'],
    changes: [['line1', 'Str', 'ST']],
    deliverability: 'likely',
  },
  {
    name: 'Pike Place Market: already in USPS form',
    input: a('85 PIKE ST', 'SEATTLE', 'WA', '98101'),
    out: ['85 PIKE ST', null, 'SEATTLE', 'WA', '98101'],
    deliverability: 'likely',
  },
  {
    name: 'Independence Hall with an apartment spelled out in line2',
    input: a('520 Chestnut Street', 'Philadelphia', 'PA', '19106', { line2: 'Apartment #4' }),
    out: ['520 CHESTNUT ST', 'APT 4', 'PHILADELPHIA', 'PA', '19106'],
    changes: [
      ['line1', 'Street', 'ST'],
      ['line2', 'Apartment', 'APT'],
      ['line2', '#4', '4'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Massachusetts State House, ZIP whose leading zero a spreadsheet dropped',
    input: a('24 Beacon St', 'Boston', 'MA', '2133'),
    out: ['24 BEACON ST', null, 'BOSTON', 'MA', '02133'],
    changes: [['zip', '2133', '02133']],
    deliverability: 'likely',
  },
  {
    name: 'Boston Public Library, room in line2',
    input: a('700 Boylston Street', 'Boston', 'Massachusetts', '02116', { line2: 'Room 101' }),
    out: ['700 BOYLSTON ST', 'RM 101', 'BOSTON', 'MA', '02116'],
    changes: [
      ['line1', 'Street', 'ST'],
      ['line2', 'Room', 'RM'],
      ['state', 'Massachusetts', 'MA'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'NOAA, Silver Spring: hyphenated East-West is a name, not a directional',
    input: a('1315 East-West Highway', 'Silver Spring', 'MD', '20910'),
    out: ['1315 EAST-WEST HWY', null, 'SILVER SPRING', 'MD', '20910'],
    changes: [['line1', 'Highway', 'HWY']],
    deliverability: 'likely',
  },
  {
    name: 'NOAA written without the hyphen: two directional words are the name (EAST WEST HWY)',
    input: a('1315 East West Highway', 'Silver Spring', 'MD', '20910'),
    out: ['1315 EAST WEST HWY', null, 'SILVER SPRING', 'MD', '20910'],
    changes: [['line1', 'Highway', 'HWY']],
    deliverability: 'likely',
  },
  {
    name: 'A street whose whole name is a suffix word keeps it (The Crescent)',
    input: a('12 Crescent', 'Montclair', 'NJ', '07042'),
    out: ['12 CRESCENT', null, 'MONTCLAIR', 'NJ', '07042'],
    deliverability: 'likely',
  },
  {
    name: 'North Avenue: a directional word that is the name is not abbreviated',
    input: a('1 North Avenue', 'Atlanta', 'GA', '30308'),
    out: ['1 NORTH AVE', null, 'ATLANTA', 'GA', '30308'],
    changes: [['line1', 'Avenue', 'AVE']],
    deliverability: 'likely',
  },
  {
    name: 'Apple Park: a line without a house number is only cleaned',
    input: a('One Apple Park Way', 'Cupertino', 'CA', '95014'),
    out: ['ONE APPLE PARK WAY', null, 'CUPERTINO', 'CA', '95014'],
    deliverability: 'likely',
  },
  {
    name: 'Library of Congress with a building in line2',
    input: a('101 Independence Ave SE', 'Washington', 'DC', '20540', { line2: 'Building 5' }),
    out: ['101 INDEPENDENCE AVE SE', 'BLDG 5', 'WASHINGTON', 'DC', '20540'],
    changes: [['line2', 'Building', 'BLDG']],
    deliverability: 'likely',
  },
  {
    name: 'Smithsonian Castle: city written with its state code',
    input: a('1000 Jefferson Dr SW', 'Washington DC', 'DC', '20560'),
    out: ['1000 JEFFERSON DR SW', null, 'WASHINGTON', 'DC', '20560'],
    changes: [['city', 'Washington DC', 'WASHINGTON']],
    deliverability: 'likely',
  },
  {
    name: 'A unit designator without a number after the suffix',
    input: a('24 Beacon Street Basement', 'Boston', 'MA', '02133'),
    out: ['24 BEACON ST BSMT', null, 'BOSTON', 'MA', '02133'],
    changes: [
      ['line1', 'Street', 'ST'],
      ['line1', 'Basement', 'BSMT'],
    ],
    deliverability: 'likely',
  },

  // ---- PO boxes and routes ----
  {
    name: 'P.O. Box with periods',
    input: a('P.O. Box 12', 'Boston', 'MA', '02133'),
    out: ['PO BOX 12', null, 'BOSTON', 'MA', '02133'],
    changes: [['line1', 'P.O. Box', 'PO BOX']],
    deliverability: 'likely',
  },
  {
    name: 'Post Office Box spelled out, lower case',
    input: a('post office box 4567', 'Seattle', 'WA', '98101'),
    out: ['PO BOX 4567', null, 'SEATTLE', 'WA', '98101'],
    changes: [['line1', 'post office box', 'PO BOX']],
    deliverability: 'likely',
  },
  {
    name: 'P O Box with a pound sign',
    input: a('P O Box #88', 'Memphis', 'TN', '38116'),
    out: ['PO BOX 88', null, 'MEMPHIS', 'TN', '38116'],
    changes: [
      ['line1', 'P O Box', 'PO BOX'],
      ['line1', '#88', '88'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Rural route',
    input: a('Rural Route 2 Box 15', 'Memphis', 'TN', '38116'),
    out: ['RR 2 BOX 15', null, 'MEMPHIS', 'TN', '38116'],
    changes: [['line1', 'Rural Route', 'RR']],
    deliverability: 'likely',
  },

  // ---- territories and freely associated states ----
  {
    name: 'La Fortaleza, San Juan PR, country PR',
    input: a('63 Calle Fortaleza', 'San Juan', 'PR', '00901', { country: 'PR' }),
    out: ['63 CALLE FORTALEZA', null, 'SAN JUAN', 'PR', '00901'],
    deliverability: 'likely',
  },
  {
    name: 'El Morro, San Juan PR, country US, state name',
    input: a('501 Calle Norzagaray', 'San Juan', 'Puerto Rico', '00901', { country: 'US' }),
    out: ['501 CALLE NORZAGARAY', null, 'SAN JUAN', 'PR', '00901'],
    changes: [['state', 'Puerto Rico', 'PR']],
    deliverability: 'likely',
  },
  {
    name: 'Mayagüez PR with an urbanization line and accents',
    input: a('Urbanización Mayagüez Terrace', 'Mayagüez', 'PR', '00680', { line2: '5 Calle Ramón Power' }),
    out: ['URB MAYAGUEZ TERRACE', '5 CALLE RAMON POWER', 'MAYAGUEZ', 'PR', '00680'],
    changes: [
      ['line1', 'Urbanización', 'URB'],
      ['line1', 'Mayagüez', 'MAYAGUEZ'],
      ['line2', 'Ramón', 'RAMON'],
      ['city', 'Mayagüez', 'MAYAGUEZ'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'Government House, Charlotte Amalie, St. Thomas VI',
    input: a('21-22 Kongens Gade', 'St. Thomas', 'VI', '00802', { country: 'VI' }),
    out: ['21-22 KONGENS GADE', null, 'ST THOMAS', 'VI', '00802'],
    changes: [['city', 'St. Thomas', 'ST THOMAS']],
    deliverability: 'likely',
  },
  {
    name: 'Charlotte Amalie is a name USPS accepts for 00802',
    input: a('21-22 Kongens Gade', 'Charlotte Amalie', 'VI', '00802'),
    out: ['21-22 KONGENS GADE', null, 'CHARLOTTE AMALIE', 'VI', '00802'],
    deliverability: 'likely',
  },
  {
    name: 'Guam: Hagåtña with accents, West Marine Corps Drive',
    input: a('513 West Marine Corps Drive', 'Hagåtña', 'GU', '96910', { country: 'GU' }),
    out: ['513 W MARINE CORPS DR', null, 'HAGATNA', 'GU', '96910'],
    changes: [
      ['line1', 'West', 'W'],
      ['line1', 'Drive', 'DR'],
      ['city', 'Hagåtña', 'HAGATNA'],
    ],
    deliverability: 'likely',
  },
  {
    name: 'American Samoa, PO Box',
    input: a('PO Box 997', 'Pago Pago', 'AS', '96799'),
    out: ['PO BOX 997', null, 'PAGO PAGO', 'AS', '96799'],
    deliverability: 'likely',
  },
  {
    name: 'Saipan, Northern Mariana Islands',
    input: a('Caller Box 10007', 'Saipan', 'MP', '96950', { country: 'MP' }),
    out: ['CALLER BOX 10007', null, 'SAIPAN', 'MP', '96950'],
    deliverability: 'likely',
  },
  {
    name: 'Pohnpei, Micronesia',
    input: a('PO Box PS-53', 'Pohnpei', 'FM', '96941', { country: 'FM' }),
    out: ['PO BOX PS-53', null, 'POHNPEI', 'FM', '96941'],
    deliverability: 'likely',
  },
  {
    name: 'Majuro, Marshall Islands',
    input: a('PO Box 2', 'Majuro', 'MH', '96960'),
    out: ['PO BOX 2', null, 'MAJURO', 'MH', '96960'],
    deliverability: 'likely',
  },
  {
    name: 'Koror, Palau (accepted for 96940, whose directory city is PALAU)',
    input: a('PO Box 6051', 'Koror', 'PW', '96940', { country: 'PW' }),
    out: ['PO BOX 6051', null, 'KOROR', 'PW', '96940'],
    deliverability: 'likely',
  },

  // ---- military ----
  {
    name: 'APO AE 09021 (Ramstein)',
    input: a('Unit 3050 Box 135', 'APO', 'AE', '09021'),
    out: ['UNIT 3050 BOX 135', null, 'APO', 'AE', '09021'],
    deliverability: 'likely',
  },
  {
    name: 'FPO AP, lower case, PSC line',
    input: a('psc 455 box 1', 'fpo', 'ap', '96601'),
    out: ['PSC 455 BOX 1', null, 'FPO', 'AP', '96601'],
    deliverability: 'likely',
  },
  {
    name: 'APO AA 34001',
    input: a('Unit 9100 Box 2', 'APO', 'AA', '34001'),
    out: ['UNIT 9100 BOX 2', null, 'APO', 'AA', '34001'],
    deliverability: 'likely',
  },
  {
    name: 'Military state with a real city instead of APO',
    input: a('Unit 3050 Box 135', 'Ramstein', 'AE', '09021'),
    out: ['UNIT 3050 BOX 135', null, 'RAMSTEIN', 'AE', '09021'],
    deliverability: 'doubtful',
    warnings: ['military_city'],
  },
  {
    name: 'APO AE with a Pacific (AP) ZIP',
    input: a('Unit 3050 Box 135', 'APO', 'AE', '96601'),
    out: ['UNIT 3050 BOX 135', null, 'APO', 'AE', '96601'],
    deliverability: 'doubtful',
    warnings: ['military_zip_mismatch'],
  },
  {
    name: 'APO with a civilian state',
    input: a('Unit 3050 Box 135', 'APO', 'NY', '09021'),
    out: ['UNIT 3050 BOX 135', null, 'APO', 'NY', '09021'],
    deliverability: 'doubtful',
    warnings: ['military_city_state', 'zip_state_mismatch'],
  },

  // ---- wrong ZIP, state or city ----
  {
    name: 'Wrong ZIP: a Boston address with a Manhattan ZIP',
    input: a('700 Boylston St', 'Boston', 'MA', '10001'),
    out: ['700 BOYLSTON ST', null, 'BOSTON', 'MA', '10001'],
    deliverability: 'doubtful',
    warnings: ['zip_state_mismatch'],
  },
  {
    name: 'Wrong state: Willis Tower in IN',
    input: a('233 S Wacker Dr', 'Chicago', 'IN', '60606'),
    out: ['233 S WACKER DR', null, 'CHICAGO', 'IN', '60606'],
    deliverability: 'doubtful',
    warnings: ['zip_state_mismatch'],
  },
  {
    name: 'Swapped city: Brooklyn with a Manhattan ZIP',
    input: a('350 5th Ave', 'Brooklyn', 'NY', '10118'),
    out: ['350 5TH AVE', null, 'BROOKLYN', 'NY', '10118'],
    deliverability: 'doubtful',
    warnings: ['zip_city_mismatch'],
  },
  {
    name: 'Neighbouring city: Boston with a Cambridge ZIP',
    input: a('700 Boylston St', 'Boston', 'MA', '02139'),
    out: ['700 BOYLSTON ST', null, 'BOSTON', 'MA', '02139'],
    deliverability: 'doubtful',
    warnings: ['zip_city_mismatch'],
  },
  {
    name: 'A ZIP no one has',
    input: a('1 Main St', 'Anchorage', 'AK', '99999'),
    out: ['1 MAIN ST', null, 'ANCHORAGE', 'AK', '99999'],
    deliverability: 'doubtful',
    warnings: ['zip_unknown'],
  },
  {
    name: "A ZIP no one has, in another state's range",
    input: a('1 Main St', 'Honolulu', 'HI', '00999'),
    out: ['1 MAIN ST', null, 'HONOLULU', 'HI', '00999'],
    deliverability: 'doubtful',
    warnings: ['zip_unknown', 'zip_state_mismatch'],
  },
  {
    name: 'A ZIP that is not a ZIP',
    input: a('1 Main St', 'Austin', 'TX', '7870'),
    out: ['1 MAIN ST', null, 'AUSTIN', 'TX', '7870'],
    deliverability: 'doubtful',
    warnings: ['zip_invalid'],
  },
  {
    name: 'A state that is not a state',
    input: a('1 Main St', 'Austin', 'Texxas', '78701'),
    out: ['1 MAIN ST', null, 'AUSTIN', 'TEXXAS', '78701'],
    deliverability: 'doubtful',
    warnings: ['state_unknown'],
  },
  {
    name: 'Country Puerto Rico with a New York state',
    input: a('63 Calle Fortaleza', 'San Juan', 'NY', '00901', { country: 'PR' }),
    out: ['63 CALLE FORTALEZA', null, 'SAN JUAN', 'NY', '00901'],
    deliverability: 'doubtful',
    warnings: ['country_state_mismatch', 'zip_state_mismatch'],
  },

  // ---- not checked, missing data ----
  {
    name: 'Non-US country: left as written',
    input: a('10 Downing Street', 'London', '', 'SW1A 2AA', { country: 'GB' }),
    out: ['10 Downing Street', null, 'London', '', 'SW1A 2AA'],
    deliverability: 'unknown',
    warnings: ['not_checked'],
  },
  {
    name: 'Canada is another country, even with a 2-letter province',
    input: a('24 Sussex Drive', 'Ottawa', 'ON', 'K1M 1M4', { country: 'CA', line2: 'Apt 1' }),
    out: ['24 Sussex Drive', 'Apt 1', 'Ottawa', 'ON', 'K1M 1M4'],
    deliverability: 'unknown',
    warnings: ['not_checked'],
  },
  {
    name: 'Missing city and ZIP',
    input: a('1600 Pennsylvania Ave NW', '', 'DC', ' '),
    out: ['1600 PENNSYLVANIA AVE NW', null, '', 'DC', ''],
    deliverability: 'unknown',
    warnings: ['missing_field', 'missing_field'],
  },
  {
    name: 'Country written as USA; empty line2 becomes null',
    input: a('85 Pike St', 'Seattle', 'WA', '98101', { country: 'U.S.A.', line2: '   ' }),
    out: ['85 PIKE ST', null, 'SEATTLE', 'WA', '98101'],
    deliverability: 'likely',
  },
];

describe('checkUsAddress: real addresses written many ways', () => {
  it.each(ROWS.map((r) => [r.name, r] as const))('%s', (_name, row) => {
    const check = checkUsAddress(row.input);
    const [line1, line2, city, state, zip] = row.out;
    expect(check.normalized).toEqual({ line1, line2, city, state, zip });
    expect(check.changes.map((c) => [c.field, c.from, c.to])).toEqual(row.changes ?? []);
    for (const c of check.changes) expect(c.reason).toMatch(/\w/);
    expect(check.warnings.map((w) => w.code)).toEqual(row.warnings ?? []);
    expect(check.deliverability).toBe(row.deliverability);
  });

  it('has at least 40 real addresses in the table', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(40);
  });
});

describe('checkUsAddress: warning messages', () => {
  const messages = (input: AddressCheckInput) => checkUsAddress(input).warnings.map((w) => w.message);

  it('names the city and state a ZIP belongs to, and where the written city really is', () => {
    expect(messages(a('700 Boylston St', 'Boston', 'MA', '10001'))).toEqual([
      'ZIP 10001 belongs to NEW YORK, NY, not BOSTON, MA (BOSTON, MA ZIPs include 02108)',
    ]);
    expect(messages(a('350 5th Ave', 'Brooklyn', 'NY', '10118'))).toEqual([
      'ZIP 10118 belongs to NEW YORK, NY, not BROOKLYN (BROOKLYN, NY ZIPs include 11201)',
    ]);
  });

  it('says when the written city is a neighbour that may be an accepted name', () => {
    expect(messages(a('700 Boylston St', 'Boston', 'MA', '02139'))).toEqual([
      'ZIP 02139 belongs to CAMBRIDGE, MA, not BOSTON (BOSTON is nearby, ZIP 02108: it may be a name USPS accepts for 02139, or the ZIP is wrong)',
    ]);
  });

  it('blames the state when the city matches the ZIP', () => {
    expect(messages(a('233 S Wacker Dr', 'Chicago', 'IN', '60606'))).toEqual(['ZIP 60606 is in IL, not IN']);
  });

  it('explains military rules', () => {
    expect(messages(a('Unit 3050 Box 135', 'Ramstein', 'AE', '09021'))).toEqual([
      'military addresses in AE take APO, FPO or DPO as the city, not RAMSTEIN',
    ]);
    expect(messages(a('Unit 3050 Box 135', 'APO', 'AE', '96601'))).toEqual([
      'ZIP 96601 is not an AE ZIP (AE uses 090xx-098xx)',
    ]);
    expect(messages(a('PSC 1 Box 2', 'FPO', 'AE', '09021'))).toEqual(['ZIP 09021 is an APO ZIP, not FPO']);
  });

  it('places an unknown ZIP by its range', () => {
    expect(messages(a('1 Main St', 'Honolulu', 'HI', '00999'))).toEqual([
      'ZIP 00999 is not in the ZIP directory',
      'ZIPs starting 009 belong to PR, not HI',
    ]);
  });

  it('gives dry-run warning lines, without the not-checked note for foreign addresses', () => {
    expect(addressCheckWarnings(checkUsAddress(a('700 Boylston St', 'Boston', 'MA', '10001')))).toEqual([
      'Recipient address: ZIP 10001 belongs to NEW YORK, NY, not BOSTON, MA (BOSTON, MA ZIPs include 02108)',
    ]);
    expect(addressCheckWarnings(checkUsAddress(a('1', '', 'DC', '20500')))).toEqual([
      'Recipient address: the city is missing',
    ]);
    expect(
      addressCheckWarnings(checkUsAddress(a('10 Downing Street', 'London', '', 'SW1A 2AA', { country: 'GB' }))),
    ).toEqual([]);
    expect(addressCheckWarnings(checkUsAddress(a('1600 Pennsylvania Ave NW', 'Washington', 'DC', '20500')))).toEqual(
      [],
    );
  });
});

describe('the ZIP directory', () => {
  it('is read only when a US address is checked', () => {
    jest.isolateModules(() => {
      const check =
        require('../../domain/outbound-mail/address-check') as typeof import('../../domain/outbound-mail/address-check');
      const directory =
        require('../../domain/outbound-mail/zip-directory') as typeof import('../../domain/outbound-mail/zip-directory');
      check.checkUsAddress(a('10 Downing Street', 'London', '', 'SW1A 2AA', { country: 'GB' }));
      expect(directory.isZipDirectoryLoaded()).toBe(false);
      check.checkUsAddress(a('85 Pike St', 'Seattle', 'WA', '98101'));
      expect(directory.isZipDirectoryLoaded()).toBe(true);
    });
  });

  it('covers every state, the territories, the freely associated states and APO/FPO/DPO', () => {
    const counts = zipCountsByState();
    expect(Object.values(counts).reduce((x, y) => x + y, 0)).toBeGreaterThan(40000);
    for (const state of ['PR', 'VI', 'GU', 'AS', 'MP', 'FM', 'MH', 'PW', 'AA', 'AE', 'AP', 'DC', 'AK', 'HI'])
      expect(counts[state]).toBeGreaterThan(0);
    expect(lookupZip('09498')).toEqual({ city: 'DPO', state: 'AE' });
    expect(lookupZip('96601')).toEqual({ city: 'FPO', state: 'AP' });
    expect(lookupZip('00000')).toBeUndefined();
  });
});

describe('Publication 28 tables', () => {
  it('maps every standard abbreviation to itself and common spellings to the standard', () => {
    for (const table of [STREET_SUFFIXES, DIRECTIONALS, UNIT_DESIGNATORS_WITH_NUMBER, UNIT_DESIGNATORS_ALONE]) {
      for (const standard of new Set(table.values())) expect(table.get(standard)).toBe(standard);
    }
    expect(STREET_SUFFIXES.size).toBeGreaterThan(480);
    expect(new Set(STREET_SUFFIXES.values()).size).toBeGreaterThan(190);
    expect(['AVENUE', 'AV', 'AVEN', 'AVNUE'].map((w) => STREET_SUFFIXES.get(w))).toEqual(['AVE', 'AVE', 'AVE', 'AVE']);
    expect(
      ['BOULEVARD', 'STREET', 'STR', 'PARKWAYS', 'CROSSING', 'MEADOW', 'MEADOWS'].map((w) => STREET_SUFFIXES.get(w)),
    ).toEqual(['BLVD', 'ST', 'ST', 'PKWY', 'XING', 'MDW', 'MDWS']);
    expect(['NORTHEAST', 'SOUTHWEST'].map((w) => DIRECTIONALS.get(w))).toEqual(['NE', 'SW']);
    expect(
      ['APARTMENT', 'SUITE', 'FLOOR', 'BUILDING', 'ROOM', 'UNIT'].map((w) => UNIT_DESIGNATORS_WITH_NUMBER.get(w)),
    ).toEqual(['APT', 'STE', 'FL', 'BLDG', 'RM', 'UNIT']);
    expect(['BASEMENT', 'PENTHOUSE', 'LOBBY'].map((w) => UNIT_DESIGNATORS_ALONE.get(w))).toEqual([
      'BSMT',
      'PH',
      'LBBY',
    ]);
  });
});
