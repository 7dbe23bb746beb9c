/**
 * Countries with several zones whose geographic numbers tell the zone by their leading national
 * digits (area code). The longest listed prefix of a national number decides; numbers matching
 * none (mobiles in Australia and Russia, services) take every zone of the country.
 */
type PrefixTable = ReadonlyArray<readonly [ReadonlyArray<string>, string]>

const australia: PrefixTable = [
  [["Australia/Sydney"], "2"],
  [["Australia/Melbourne", "Australia/Hobart"], "3"],
  [["Australia/Brisbane"], "7"],
  [["Australia/Adelaide", "Australia/Darwin", "Australia/Broken_Hill"], "8"],
  [["Australia/Perth"], "89"]
]

// Brazil's two-digit DDD codes, which mobiles keep too.
const brazil: PrefixTable = [
  [
    ["America/Sao_Paulo"],
    "11 12 13 14 15 16 17 18 19 21 22 24 27 28 31 32 33 34 35 37 38 41 42 43 44 45 46 47 48 49 51 53 54 55 61 62 64"
  ],
  [["America/Bahia"], "71 73 74 75 77"],
  [["America/Maceio"], "79 82"],
  [["America/Recife", "America/Noronha"], "81"],
  [["America/Recife"], "87"],
  [["America/Fortaleza"], "83 84 85 86 88 89 98 99"],
  [["America/Belem"], "91 93 94 96"],
  [["America/Araguaina"], "63"],
  [["America/Cuiaba"], "65 66"],
  [["America/Campo_Grande"], "67"],
  [["America/Porto_Velho"], "69"],
  [["America/Manaus"], "92"],
  [["America/Manaus", "America/Eirunepe"], "97"],
  [["America/Boa_Vista"], "95"],
  [["America/Rio_Branco"], "68"]
]

// Mexico's area codes (two digits for the three big cities, else three), which mobiles share. The
// states off Central time are listed; every other code is in Central time.
const mexico: PrefixTable = [
  [["America/Mexico_City"], "1 2 3 4 5 6 7 8 9"],
  [["America/Tijuana"], "664 665 686 646 661 616 658"],
  [["America/Hermosillo"], "662 631 632 633 634 637 638 641 642 643 644 645 647 651 653"],
  [["America/Mazatlan"], "612 613 615 624 667 668 669 672 673 687 694 695 696 697 698 311 319 323 324 325 327 389"],
  [["America/Chihuahua"], "614 625 627 628 629 635 636 639 648 649"],
  [["America/Ciudad_Juarez"], "656"],
  [["America/Ojinaga"], "626"],
  [["America/Matamoros"], "868 899 867 894 897"],
  [["America/Cancun"], "998 983 984 987"]
]

const russia: PrefixTable = [
  [["Europe/Moscow"], "47 48 49 81 82 83 84 85 86 87"],
  [["Europe/Kaliningrad"], "401"],
  [["Asia/Yakutsk"], "411 416"],
  [["Asia/Magadan"], "413"],
  [["Asia/Kamchatka"], "415"],
  [["Asia/Vladivostok"], "421 423 426"],
  [["Asia/Sakhalin"], "424"],
  [["Asia/Anadyr"], "427"],
  [["Europe/Ulyanovsk"], "842"],
  [["Europe/Volgograd"], "844"],
  [["Europe/Saratov"], "845"],
  [["Europe/Samara"], "846 848 341"],
  [["Europe/Astrakhan"], "851"],
  [["Europe/Kirov"], "833"],
  [["Asia/Irkutsk"], "301 395"],
  [["Asia/Chita"], "302"],
  [["Asia/Yekaterinburg"], "342 343 345 346 347 349 351 352 353"],
  [["Asia/Omsk"], "381"],
  [["Asia/Tomsk"], "382"],
  [["Asia/Novosibirsk"], "383"],
  [["Asia/Novokuznetsk"], "384"],
  [["Asia/Barnaul"], "385 388"],
  [["Asia/Krasnoyarsk"], "390 391 394"]
]

const indexed = (table: PrefixTable): ReadonlyMap<string, ReadonlyArray<string>> =>
  new Map(table.flatMap(([zones, prefixes]) => prefixes.split(" ").map((prefix) => [prefix, zones] as const)))

const tables: Readonly<Record<string, ReadonlyMap<string, ReadonlyArray<string>>>> = {
  AU: indexed(australia),
  BR: indexed(brazil),
  MX: indexed(mexico),
  RU: indexed(russia)
}

/** The zones the longest listed prefix of `nationalNumber` gives, if the country has a table and one matches. */
export const zonesByAreaCode = (country: string, nationalNumber: string): ReadonlyArray<string> | undefined => {
  const table = tables[country]
  if (table === undefined) return undefined
  for (let length = Math.min(4, nationalNumber.length); length > 0; length--) {
    const zones = table.get(nationalNumber.slice(0, length))
    if (zones !== undefined) return zones
  }
  return undefined
}
