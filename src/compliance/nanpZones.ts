/**
 * NANP area codes of the United States and Canada and the IANA zones their numbers are in. An area
 * code that spans zones lists each (the recipient may be in any: `recipientZones` takes the most
 * restrictive). Caribbean and Pacific NANP members are countries of their own (libphonenumber gives
 * PR, JM, GU, …) and take their country's zone. Area codes not listed (new overlays, services such
 * as 800) fall back to every zone of the country.
 */
const byZone: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
  // United States
  [
    ["America/New_York"],
    "203 475 860 959 302 202 771 239 305 321 324 352 386 407 448 561 645 656 689 727 728 754 772 786 813 863 904 941 954 229 404 470 478 678 706 762 770 912 943 207 227 240 301 410 443 667 339 351 413 508 617 774 781 857 978 603 201 551 609 640 732 848 856 862 908 973 212 315 329 332 347 363 516 518 585 607 624 631 646 680 716 718 838 845 914 917 929 934 252 336 472 704 743 828 910 919 980 984 216 220 234 283 326 330 380 419 436 440 513 567 614 740 937 215 223 267 272 412 445 484 570 582 610 717 724 814 835 878 401 803 839 843 854 864 802 276 434 540 571 686 703 757 804 826 948 304 681 423 865 502 859 606"
  ],
  [["America/Detroit"], "231 248 269 313 517 586 616 679 734 810 947 989"],
  [["America/Detroit", "America/Menominee"], "906"],
  [["America/Indiana/Indianapolis"], "317 463 765 260"],
  [["America/Indiana/Indianapolis", "America/Indiana/Knox"], "574"],
  [["America/Indiana/Indianapolis", "America/Chicago"], "812 930"],
  [["America/Kentucky/Louisville", "America/Chicago"], "270 364"],
  [["America/New_York", "America/Chicago"], "850"],
  [
    ["America/Chicago"],
    "219 205 251 256 334 659 938 479 501 870 327 217 224 309 312 331 447 464 618 630 708 730 773 779 815 847 872 319 515 563 641 712 316 913 225 318 337 504 985 218 320 507 612 651 763 952 228 601 662 769 314 417 557 573 636 660 816 975 402 531 405 539 572 580 918 210 214 254 281 325 346 361 409 430 432 469 512 682 713 726 737 806 817 830 832 903 936 940 945 956 972 979 262 274 414 534 608 715 920 615 629 931 731 901"
  ],
  [["America/Chicago", "America/Denver"], "620 785 308 605"],
  [["America/Chicago", "America/North_Dakota/Center", "America/Denver"], "701"],
  [["America/Denver"], "915 303 719 720 970 983 406 505 575 385 435 801 307"],
  [["America/Boise", "America/Los_Angeles"], "208 986"],
  [["America/Phoenix"], "480 520 602 623"],
  [["America/Phoenix", "America/Denver"], "928"],
  [["America/Los_Angeles", "America/Boise"], "541"],
  [
    ["America/Los_Angeles"],
    "702 725 775 458 503 971 209 213 279 310 323 341 350 369 408 415 424 442 510 530 559 562 619 626 628 650 657 661 669 707 714 747 760 805 818 820 831 840 858 909 916 925 949 951 206 253 360 425 509 564"
  ],
  [["America/Anchorage", "America/Adak"], "907"],
  [["Pacific/Honolulu"], "808"],
  // Canada
  [["America/Vancouver"], "604"],
  [["America/Vancouver", "America/Edmonton", "America/Creston", "America/Dawson_Creek"], "236 250 257 672 778"],
  [["America/Edmonton"], "368 403 587 780 825"],
  [["America/Regina"], "306 474 639"],
  [["America/Winnipeg"], "204 431 584"],
  [
    ["America/Toronto"],
    "226 249 289 343 365 382 416 437 519 548 613 647 683 705 742 753 905 942 263 354 438 450 468 514 579 819 873"
  ],
  [["America/Toronto", "America/Halifax"], "367 418 581"],
  [["America/Toronto", "America/Winnipeg"], "807"],
  [["America/Moncton"], "506"],
  [["America/Halifax"], "782 902"],
  [["America/St_Johns", "America/Goose_Bay"], "709 879"],
  [["America/Whitehorse", "America/Edmonton", "America/Winnipeg", "America/Toronto"], "867"]
]

export const nanpZones: ReadonlyMap<string, ReadonlyArray<string>> = new Map(
  byZone.flatMap(([zones, codes]) => codes.split(" ").map((code) => [code, zones] as const))
)
