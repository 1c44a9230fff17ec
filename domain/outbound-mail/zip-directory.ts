// The US ZIP directory the offline address check compares against: which city and state
// each 5-digit ZIP belongs to, from the `zipcodes` package's data (42,555 US ZIPs with
// the territories, the freely associated states and APO/FPO/DPO). Loaded on first use.
//
// The data file is read and parsed as JSON rather than `require`d: requiring the package
// compiles a 5 MB object literal (and its Canadian table) and leaves about 70 MB more
// resident memory; parsing it as JSON into the compact index below leaves about 20 MB.
import { readFileSync } from 'node:fs';

export interface ZipPlace {
  /** The ZIP's city as the directory names it, upper case ("SAINT LOUIS", "APO"). */
  city: string;
  state: string;
}

interface Directory {
  /** Index by the ZIP's numeric value: 0 = unknown, n = places[n - 1]. */
  slots: Uint32Array;
  places: ZipPlace[];
  /** 3-digit prefix -> states with ZIPs under it. */
  prefixStates: Map<string, string[]>;
  /** "ST|CITYKEY" -> that city's ZIPs in ascending order, built on first need. */
  zipsByCity?: Map<string, string[]>;
}

/** The package's data file: one line `exports.codes = {<JSON>};`, then the state map. */
const DATA_FILE = 'zipcodes/lib/codes.js';
const MIN_EXPECTED_ZIPS = 40000;

let directory: Directory | undefined;

function load(): Directory {
  const text = readFileSync(require.resolve(DATA_FILE), 'utf8');
  const start = text.indexOf('{');
  const end = text.indexOf('};\n', start);
  const codes = JSON.parse(text.slice(start, end + 1)) as Record<
    string,
    { zip: string; city: string; state: string; country: string }
  >;
  const slots = new Uint32Array(100000);
  const places: ZipPlace[] = [];
  const placeIndex = new Map<string, number>();
  const prefixStates = new Map<string, string[]>();
  let count = 0;
  for (const r of Object.values(codes)) {
    if (r.country !== 'US' || !/^\d{5}$/.test(r.zip)) continue;
    const city = r.city.toUpperCase();
    const key = `${r.state}|${city}`;
    let n = placeIndex.get(key);
    if (n === undefined) {
      places.push({ city, state: r.state });
      n = places.length;
      placeIndex.set(key, n);
    }
    slots[Number(r.zip)] = n;
    count++;
    const prefix = r.zip.slice(0, 3);
    const states = prefixStates.get(prefix) ?? [];
    if (!states.includes(r.state)) states.push(r.state);
    prefixStates.set(prefix, states);
  }
  // A changed data layout in a new package version must fail loudly, not check against nothing.
  if (count < MIN_EXPECTED_ZIPS) throw new Error(`ZIP directory: only ${count} US ZIPs read from ${DATA_FILE}`);
  return { slots, places, prefixStates };
}

function dir(): Directory {
  return (directory ??= load());
}

/** The city and state a 5-digit ZIP belongs to; undefined when the directory does not know it. */
export function lookupZip(zip5: string): ZipPlace | undefined {
  if (!/^\d{5}$/.test(zip5)) return undefined;
  const d = dir();
  const n = d.slots[Number(zip5)];
  return n ? d.places[n - 1] : undefined;
}

/** States that have ZIPs starting with these three digits (usually one). */
export function statesOfZipPrefix(prefix3: string): readonly string[] {
  return dir().prefixStates.get(prefix3) ?? [];
}

/**
 * The ZIPs (ascending) the directory gives a city in a state; empty when the state has no
 * city of that name. `cityKey` turns a city name into its comparison form.
 */
export function zipsOfCity(state: string, city: string, cityKey: (name: string) => string): readonly string[] {
  const d = dir();
  if (!d.zipsByCity) {
    const placeKeys = d.places.map((p) => `${p.state}|${cityKey(p.city)}`);
    const index = new Map<string, string[]>();
    for (let zip = 0; zip < d.slots.length; zip++) {
      const n = d.slots[zip];
      if (!n) continue;
      const zips = index.get(placeKeys[n - 1]);
      if (zips) zips.push(String(zip).padStart(5, '0'));
      else index.set(placeKeys[n - 1], [String(zip).padStart(5, '0')]);
    }
    d.zipsByCity = index;
  }
  return d.zipsByCity.get(`${state}|${cityKey(city)}`) ?? [];
}

/** Whether the data has been read yet (loading is lazy; tests and the bench look). */
export function isZipDirectoryLoaded(): boolean {
  return directory !== undefined;
}

/** How many ZIPs the directory holds per state (coverage tests and the bench report it). */
export function zipCountsByState(): Record<string, number> {
  const d = dir();
  const counts: Record<string, number> = {};
  for (const n of d.slots) if (n) counts[d.places[n - 1].state] = (counts[d.places[n - 1].state] ?? 0) + 1;
  return counts;
}
