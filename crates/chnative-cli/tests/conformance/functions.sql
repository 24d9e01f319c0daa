-- ClickHouse's documented function families, a few calls each.
-- arithmetic
SELECT plus(1, 2) AS a, minus(10, 20) AS b, multiply(3, 4.5) AS c, divide(1, 3) AS d, intDiv(7, 2) AS e, modulo(-7, 3) AS f;
SELECT intDivOrZero(1, 0) AS a, moduloOrZero(5, 0) AS b, negate(5) AS c, abs(-3) AS d, gcd(12, 18) AS e, lcm(4, 6) AS f;
SELECT 255 + 1 AS a, toUInt8(255) + 1 AS b, toInt8(-128) - 1 AS c, 9223372036854775807 + 1 AS d;
SELECT number * 2.5 AS a, number / 0 AS b, -number / 0 AS c, number % 3 AS d FROM numbers(4);
SELECT positiveModulo(-7, 3) AS a, byteSwap(123) AS b, isFinite(1 / 0) AS c, isNaN(0 / 0) AS d;
-- math
SELECT e() AS a, pi() AS b, exp(1) AS c, log(10) AS d, exp2(10) AS e, log2(1024) AS f, exp10(3) AS g, log10(1000) AS h;
SELECT sqrt(2) AS a, cbrt(27) AS b, pow(2, 0.5) AS c, sin(1) AS d, cos(1) AS e, tan(1) AS f, asin(1) AS g, atan2(1, 2) AS h;
SELECT sinh(1) AS a, cosh(1) AS b, tanh(1) AS c, erf(1) AS d, erfc(1) AS e, lgamma(5) AS f, tgamma(5) AS g, hypot(3, 4) AS h;
SELECT sign(-3) AS a, degrees(pi()) AS b, radians(180) AS c, factorial(10) AS d, widthBucket(10.15, -8.6, 23, 18) AS e;
-- rounding
SELECT round(2.5) AS a, round(3.5) AS b, round(-2.5) AS c, round(1.2345, 2) AS d, round(1234, -2) AS e, roundBankers(2.5) AS f;
SELECT floor(-1.5) AS a, ceil(-1.5) AS b, trunc(-1.5) AS c, floor(123.456, 1) AS d, ceil(123.451, 2) AS e, roundToExp2(1000) AS f;
SELECT round(toDecimal64(2.345, 3), 2) AS a, floor(toDecimal32(-1.5, 1)) AS b, roundDown(15, [10, 20]) AS c, roundAge(35) AS d;
-- comparison and logic
SELECT 1 = 1 AS a, 1 != 2 AS b, 'a' < 'b' AS c, 1 <=> NULL AS d, NULL = NULL AS e, greatest(1, 3, 2) AS f, least('b', 'a') AS g;
SELECT and(1, 0) AS a, or(0, 1) AS b, not(1) AS c, xor(1, 1) AS d, 1 AND NULL AS e, 0 OR NULL AS f;
-- conditional
SELECT if(number > 1, 'big', 'small') AS a, multiIf(number = 0, 'zero', number = 1, 'one', 'many') AS b, number > 1 ? 1 : 0 AS c FROM numbers(3);
SELECT CASE number WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE NULL END AS c FROM numbers(3);
-- strings
SELECT length('héllo') AS a, lengthUTF8('héllo') AS b, lower('ABC') AS c, upper('abc') AS d, reverse('abc') AS e, concat('a', 'b', 'c') AS f;
SELECT substring('hello', 2, 3) AS a, substringUTF8('héllo', 2, 2) AS b, left('hello', 2) AS c, right('hello', 2) AS d, repeat('ab', 3) AS e;
SELECT trim('  x  ') AS a, trimLeft('  x') AS b, trimRight('x  ') AS c, leftPad('7', 3, '0') AS d, rightPad('7', 3, '.') AS e;
SELECT format('{} and {}', 'a', 'b') AS a, concatWithSeparator('-', 'a', 'b') AS b, empty('') AS c, notEmpty('') AS d, startsWith('abc', 'ab') AS e;
SELECT base64Encode('hello') AS a, base64Decode('aGVsbG8=') AS b, hex('abc') AS c, unhex('616263') AS d, hex(255) AS e, bin(5) AS f;
SELECT toValidUTF8('a\xffb') AS a, initcap('hello world') AS b, soundex('Robert') AS c, ascii('A') AS d, char(72, 105) AS e;
SELECT space(3) AS a, replaceAll('a.b.c', '.', '/') AS b, replaceOne('aaa', 'a', 'b') AS c, replaceRegexpAll('abc123', '[0-9]', '#') AS d;
SELECT position('hello', 'l') AS a, positionCaseInsensitive('HELLO', 'l') AS b, locate('hello', 'lo') AS c, countSubstrings('aaa', 'a') AS d;
SELECT like('abc', 'a%') AS a, ilike('ABC', 'a%') AS b, match('abc', '^a.c$') AS c, extract('abc123', '[0-9]+') AS d, extractAll('a1b22', '[0-9]+') AS e;
SELECT multiSearchAny('hello', ['x', 'l']) AS a, multiMatchAny('abc', ['^z', 'b']) AS b, ngramDistance('abc', 'abd') AS c;
SELECT splitByChar(',', 'a,b,,c') AS a, splitByString('::', 'x::y') AS b, splitByRegexp('[0-9]', 'a1b2c') AS c, alphaTokens('ab1cd') AS d;
SELECT arrayStringConcat(['a', 'b'], '-') AS a, splitByWhitespace(' a  b ') AS b, extractAllGroupsVertical('k1=v1,k2=v2', '(\\w+)=(\\w+)') AS c;
SELECT 'it\'s' AS a, normalizeUTF8NFC('é') AS b, editDistance('kitten', 'sitting') AS c, stringJaccardIndex('ab', 'bc') AS d;
SELECT encodeXMLComponent('<a&b>') AS a, decodeXMLComponent('&lt;x&gt;') AS b, encodeURLComponent('a b/c') AS c, decodeURLComponent('a%20b') AS d;
SELECT toString(123) AS a, toString(1.5) AS b, toString(toDate('2024-01-01')) AS c, toString([1, 2]) AS d, toString(NULL) AS e;
-- type conversion
SELECT toInt32('42') AS a, toFloat64('1.5e3') AS b, toInt32OrZero('x') AS c, toInt32OrNull('x') AS d, toUInt8OrDefault('300', 7::UInt8) AS e;
SELECT CAST('2024-01-02' AS Date) AS a, CAST('1.25' AS Decimal(5, 2)) AS b, CAST(1 AS String) AS c, CAST([1, 2] AS Array(String)) AS d;
SELECT toDecimalString(toDecimal64(1.5, 3), 5) AS a, toTypeName(1) AS b, toTypeName([1.5]) AS c, toTypeName(NULL) AS d;
SELECT reinterpretAsUInt32('abcd') AS a, reinterpretAsString(65) AS b, accurateCastOrNull(300, 'UInt8') AS c, toBool('true') AS d;
SELECT parseDateTimeBestEffort('2024-01-02T03:04:05Z') AS a, parseDateTimeBestEffortOrNull('garbage') AS b, toDateOrNull('2024-13-01') AS c;
SELECT parseDateTime('2024-01-02 03:04', '%Y-%m-%d %H:%i', 'UTC') AS a, toDateTime64('2024-01-02 03:04:05.678', 3, 'UTC') AS b;
-- dates and times
SELECT toYear(d) AS y, toMonth(d) AS m, toDayOfMonth(d) AS dd, toDayOfWeek(d) AS dw, toDayOfYear(d) AS dy, toQuarter(d) AS q FROM (SELECT toDate('2024-02-29') AS d);
SELECT toStartOfMonth(d) AS a, toStartOfQuarter(d) AS b, toStartOfYear(d) AS c, toMonday(d) AS e, toStartOfWeek(d) AS f, toLastDayOfMonth(d) AS g FROM (SELECT toDate('2024-02-14') AS d);
SELECT toStartOfHour(t) AS a, toStartOfMinute(t) AS b, toStartOfFiveMinutes(t) AS c, toStartOfDay(t) AS d, toStartOfInterval(t, INTERVAL 15 MINUTE) AS e FROM (SELECT toDateTime('2024-01-02 03:34:56', 'UTC') AS t);
SELECT toHour(t) AS h, toMinute(t) AS mi, toSecond(t) AS s, toUnixTimestamp(t) AS u, toISOWeek(t) AS w, toYYYYMMDD(t) AS ymd FROM (SELECT toDateTime('2024-01-02 03:34:56', 'UTC') AS t);
SELECT addDays(toDate('2024-01-31'), 1) AS a, addMonths(toDate('2024-01-31'), 1) AS b, subtractYears(toDate('2024-02-29'), 1) AS c, addHours(toDateTime('2024-01-01 23:00:00', 'UTC'), 2) AS d;
SELECT dateDiff('day', toDate('2024-01-01'), toDate('2024-03-01')) AS a, dateDiff('second', toDateTime('2024-01-01 00:00:00', 'UTC'), toDateTime('2024-01-01 01:00:00', 'UTC')) AS b, age('month', toDate('2024-01-31'), toDate('2024-03-01')) AS c;
SELECT formatDateTime(toDateTime('2024-01-02 03:04:05', 'UTC'), '%Y/%m/%d %H:%i:%S %a %b %j') AS a, formatDateTime(toDate('2024-01-02'), '%F %W') AS b;
SELECT toTimeZone(toDateTime('2024-01-02 03:04:05', 'UTC'), 'Asia/Tokyo') AS a, toDateTime('2024-01-02 03:04:05', 'UTC') + INTERVAL 1 DAY AS b;
SELECT toDate('2024-01-01') + number AS d, toDateTime('2024-01-01 00:00:00', 'UTC') + number * 3600 AS t FROM numbers(3);
SELECT date '2001-09-29' + INTERVAL 12345 SECOND AS t;
SELECT toDateTime('2024-06-01 12:00:00') AS server_dt, toStartOfDay(toDateTime('2024-06-01 12:00:00')) AS sod;
SELECT fromUnixTimestamp(0) AS a, fromUnixTimestamp64Milli(1700000000123, 'UTC') AS b, toUnixTimestamp64Milli(toDateTime64('2024-01-01 00:00:00.5', 3, 'UTC')) AS c;
SELECT toRelativeDayNum(toDate('2024-01-01')) AS a, toModifiedJulianDay('2024-01-01') AS b, makeDate(2024, 2, 29) AS c, makeDateTime(2024, 1, 2, 3, 4, 5, 'UTC') AS d;
SELECT timeSlot(toDateTime('2024-01-02 03:34:56', 'UTC')) AS a, toStartOfTenMinutes(toDateTime('2024-01-02 03:34:56', 'UTC')) AS b, dateTrunc('month', toDateTime('2024-05-17 10:00:00', 'UTC')) AS c;
SELECT toDateTime64('2024-01-02 03:04:05.123456', 6) AS server_dt64, toDateTime(0) AS epoch_server;
-- arrays
SELECT range(5) AS a, arrayConcat([1], [2, 3]) AS b, arrayElement([1, 2, 3], 2) AS c, has([1, 2], 2) AS d, indexOf([1, 2], 2) AS e, length([1, 2]) AS f;
SELECT arraySort([3, 1, 2]) AS a, arrayReverseSort([3, 1, 2]) AS b, arrayReverse([1, 2]) AS c, arrayDistinct([1, 1, 2]) AS d, arrayUniq([1, 1, 2]) AS e;
SELECT arraySlice([1, 2, 3, 4], 2, 2) AS a, arrayPushBack([1], 2) AS b, arrayPushFront([1], 0) AS c, arrayPopBack([1, 2]) AS d, arrayResize([1], 3) AS e;
SELECT arrayMap(x -> x * 2, [1, 2]) AS a, arrayFilter(x -> x > 1, [1, 2, 3]) AS b, arrayExists(x -> x > 2, [1, 2]) AS c, arrayAll(x -> x > 0, [1, 2]) AS d;
SELECT arraySum([1, 2.5]) AS a, arrayAvg([1, 2]) AS b, arrayMin([3, 1]) AS c, arrayMax([3, 1]) AS d, arrayProduct([2, 3]) AS e, arrayCumSum([1, 2, 3]) AS f;
SELECT arrayEnumerate([5, 6]) AS a, arrayZip([1, 2], ['a', 'b']) AS b, arrayFlatten([[1], [2, 3]]) AS c, arrayCompact([1, 1, 2, 1]) AS d, arrayIntersect([1, 2], [2, 3]) AS e;
SELECT arrayReduce('sum', [1, 2, 3]) AS a, arrayFold((acc, x) -> acc + x, [1, 2, 3], 0::UInt64) AS b, arrayFirst(x -> x > 1, [1, 2, 3]) AS c, arraySplit((x, y) -> y, [1, 2, 3], [1, 0, 1]) AS d;
SELECT emptyArrayUInt8() AS a, arrayWithConstant(2, 'x') AS b, arrayJoin([1, 2]) AS c;
SELECT arrayStringConcat(arrayMap(x -> toString(x), range(3)), ',') AS a, hasAll([1, 2, 3], [1, 2]) AS b, hasAny([1], [2]) AS c, arrayCount(x -> x > 1, [1, 2, 3]) AS d;
SELECT arrayShingles([1, 2, 3, 4], 2) AS a, arrayRotateLeft([1, 2, 3], 1) AS b, arrayDotProduct([1, 2], [3, 4]) AS c, arrayPartialSort(2, [5, 1, 3, 2]) AS d;
-- maps and tuples
SELECT mapKeys(map('a', 1, 'b', 2)) AS a, mapValues(map('a', 1)) AS b, mapContains(map('a', 1), 'a') AS c, map('a', 1)['a'] AS d, mapFromArrays(['x', 'y'], [1, 2]) AS e;
SELECT mapAdd(map(1, 1), map(1, 2)) AS a, mapFilter((k, v) -> v > 1, map('a', 1, 'b', 2)) AS b, mapApply((k, v) -> (k, v * 10), map('a', 1)) AS c, mapSort(map('b', 1, 'a', 2)) AS d;
SELECT tuple(1, 'a').1 AS a, tupleElement((1, 'b'), 2) AS b, untuple((1, 'x')), tupleToNameValuePairs(CAST((1, 2) AS Tuple(a Int8, b Int8))) AS d;
SELECT tuplePlus((1, 2), (3, 4)) AS a, tupleMultiply((1, 2), (3, 4)) AS b, dotProduct((1, 2), (3, 4)) AS c, L2Norm((3, 4)) AS d, tupleNames(CAST((1, 2) AS Tuple(a Int8, b Int8))) AS e;
-- hashes and encoding
SELECT cityHash64('abc') AS a, sipHash64('abc') AS b, xxHash64('abc') AS c, murmurHash3_32('abc') AS d, farmHash64('abc') AS e, javaHash('abc') AS f;
SELECT hex(MD5('abc')) AS a, hex(SHA1('abc')) AS b, hex(SHA256('abc')) AS c, crc32('abc') AS d, sipHash128('abc') AS e;
SELECT halfMD5('abc') AS a, intHash32(1) AS b, intHash64(1) AS c, URLHash('http://x.y/z') AS d, wyHash64('abc') AS e;
-- bits
SELECT bitAnd(12, 10) AS a, bitOr(12, 10) AS b, bitXor(12, 10) AS c, bitNot(toUInt8(1)) AS d, bitShiftLeft(1, 10) AS e, bitShiftRight(1024, 3) AS f, bitCount(255) AS g;
SELECT bitTest(5, 0) AS a, bitTestAll(7, 0, 1) AS b, bitRotateLeft(toUInt8(129), 1) AS c, bitmaskToList(50) AS d, bitmaskToArray(50) AS e;
-- UUID, IP, URL
SELECT toUUIDOrNull('nope') AS a, UUIDStringToNum('61f0c404-5cb3-11e7-907b-a6006ad3dba0') = UUIDStringToNum('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS b, toUUID('61f0c404-5cb3-11e7-907b-a6006ad3dba0') AS c;
SELECT IPv4NumToString(16909060) AS a, IPv4StringToNum('1.2.3.4') AS b, IPv4ToIPv6(toIPv4('1.2.3.4')) AS c, isIPv4String('1.2.3.4') AS d, IPv6StringToNum('::1') = toFixedString(unhex('00000000000000000000000000000001'), 16) AS e;
SELECT toIPv4OrNull('x') AS a, IPv4CIDRToRange(toIPv4('192.168.5.2'), 16) AS b, isIPAddressInRange('127.0.0.1', '127.0.0.0/8') AS c;
SELECT protocol('https://a.b/c?d=1#e') AS a, domain('https://a.b/c') AS b, path('https://a.b/c/d') AS c, queryString('https://a.b/?x=1&y=2') AS d, extractURLParameter('https://a.b/?x=1&y=2', 'y') AS e, cutQueryString('https://a.b/c?x=1') AS f;
SELECT topLevelDomain('https://www.example.co.uk/') AS a, firstSignificantSubdomain('https://news.example.com/') AS b, URLHierarchy('https://a.b/c/d') AS c, fragment('https://a.b/#frag') AS d;
-- JSON functions
SELECT JSONExtractInt('{"a": 5}', 'a') AS a, JSONExtractString('{"s": "x/y"}', 's') AS b, JSONExtractRaw('{"o": {"k": [1, 2]}}', 'o') AS c, JSONHas('{"a": 1}', 'b') AS d, JSONLength('[1, 2, 3]') AS e;
SELECT JSONExtract('{"a": [1, 2]}', 'a', 'Array(UInt8)') AS a, JSONExtractKeys('{"x": 1, "y": 2}') AS b, JSONType('{"a": null}', 'a') AS c, JSONExtractKeysAndValues('{"a": 1, "b": 2}', 'Int8') AS d;
SELECT simpleJSONExtractString('{"a": "b"}', 'a') AS a, toJSONString(map('a', [1, 2])) AS b, toJSONString((1, 'x')) AS c, JSON_VALUE('{"a": {"b": 2}}', '$.a.b') AS d, isValidJSON('{') AS e;
-- other
SELECT toTypeName(materialize(1)) AS a, isNull(NULL) AS b, isNotNull(1) AS c, coalesce(NULL, 2) AS d, ifNull(NULL, 'x') AS e, nullIf(1, 1) AS f, assumeNotNull(toNullable(3)) AS g;
SELECT identity(5) AS a, ignore(1) AS b, formatReadableSize(123456789) AS c, formatReadableQuantity(1234567) AS d, formatReadableTimeDelta(3700) AS e, formatReadableDecimalSize(1500) AS f;
SELECT bar(5, 0, 10, 10) AS b, toColumnTypeName(1) AS c, isConstant(1) AS d, defaultValueOfTypeName('Int8') AS e, defaultValueOfArgumentType('x') AS f;
SELECT greatCircleDistance(55.755831, 37.617673, -55.755831, -37.617673) AS a, geoDistance(1., 2., 3., 4.) AS b, pointInPolygon((3., 3.), [(6., 0.), (8., 4.), (5., 8.), (0., 2.)]) AS c;
SELECT geohashEncode(-5.6, 42.6) AS a, geohashDecode('ezs42') AS b, h3IsValid(630814730351855103) AS c;
SELECT encrypt('aes-128-ecb', 'text', '1234567890123456') = encrypt('aes-128-ecb', 'text', '1234567890123456') AS a, hex(encrypt('aes-128-ecb', 'text', '1234567890123456')) AS b;
SELECT number, runningDifference(number * number) AS rd FROM (SELECT number FROM numbers(5) ORDER BY number) SETTINGS allow_deprecated_error_prone_window_functions = 1;
SELECT randConstant() = randConstant() AS a, toTypeName(rand()) AS b, length(generateUUIDv4()::String) AS c;
SELECT sleep(0) AS a, toUInt8(currentDatabase() != '') AS b, version() != '' AS c;
SELECT finalizeAggregation(arrayReduce('sumState', [1, 2, 3])) AS a, runningAccumulate(s) AS b FROM (SELECT sumState(number) AS s FROM numbers(3) GROUP BY number ORDER BY number) SETTINGS allow_deprecated_error_prone_window_functions = 1;
SELECT transform(2, [1, 2], ['a', 'b'], 'z') AS a, hasToken('a b c', 'b') AS b, tokens('a b,c') AS c, convertCharset('abc', 'utf-8', 'latin1') AS d;
-- more strings, search and encodings
SELECT lpad('abc', 6, '*') AS a, rpad('abc', 6, '*') AS b, concat('x', NULL) AS c, substringIndex('a.b.c', '.', 2) AS d, reverseUTF8('añb') AS e;
SELECT startsWithUTF8('añb', 'añ') AS a, endsWith('abc', 'bc') AS b, trimBoth('--x--', '-') AS c, firstLine('a\nb') AS d, upperUTF8('ñ') AS e;
SELECT regexpExtract('abc123def', '([0-9]+)', 1) AS a, regexpQuoteMeta('a.b*c') AS b, countMatches('aaa', 'a') AS c, multiSearchAllPositions('hello', ['l', 'o']) AS d;
SELECT base58Encode('hello') AS a, base32Encode('hi') AS b, hex(toFixedString('ab', 3)) AS c, unbin('0101') AS d, bitPositionsToArray(12) AS e;
SELECT normalizeQuery('SELECT 1, \'a\'') AS c, normalizedQueryHash('SELECT 1') != 0 AS d;
SELECT sparseGrams('abcdef') AS a, ngrams('abcd', 2) AS b, splitByNonAlpha('a1b,c') AS c, arrayStringConcat(['a', NULL, 'c']) AS d;
SELECT format('{0}-{1}-{0}', 'a', 'b') AS a, printf('%05.2f|%s|%d', 3.14159, 'x', 42) AS b, concatAssumeInjective('a', 'b') AS c;
-- more dates and times
SELECT toDayOfWeek(d, 1) AS a, toWeek(d) AS b, toYearWeek(d) AS c, toLastDayOfWeek(d) AS e, toStartOfISOYear(d) AS f FROM (SELECT toDate('2024-12-30') AS d);
SELECT toDateTime64('2024-01-02 03:04:05.123456', 6, 'UTC') + INTERVAL 1 MICROSECOND AS a, toStartOfMillisecond(toDateTime64('2024-01-02 03:04:05.123456', 6, 'UTC')) AS b;
SELECT dateName('month', toDate('2024-03-01')) AS a, monthName(toDate('2024-03-01')) AS b, toMonthNumSinceEpoch(toDate('2024-03-01')) AS c, changeYear(toDate('2024-02-29'), 2023) AS d;
SELECT formatDateTimeInJodaSyntax(toDateTime('2024-01-02 03:04:05', 'UTC'), 'yyyy-MM-dd HH:mm:ss') AS a, parseDateTimeInJodaSyntax('2024-01-02', 'yyyy-MM-dd', 'UTC') AS b;
SELECT timeDiff(toDateTime('2024-01-01 00:00:00', 'UTC'), toDateTime('2024-01-02 00:00:00', 'UTC')) AS a, toIntervalDay(3) + toDate('2024-01-01') AS b, now() > toDateTime('2020-01-01 00:00:00') AS c;
SELECT toDateTime('2024-03-31 01:59:59', 'Europe/London') + 1 AS a, toDateTime('2024-10-27 01:30:00', 'Europe/London') AS b, toDateTime('2024-06-01 12:00:00', 'Australia/Lord_Howe') AS c;
SELECT toDate32('2299-12-31') + 1 AS a, toDate('2149-06-06') + 1 AS b, toDateTime64('2299-12-31 23:59:59', 0, 'UTC') AS c;
-- more arrays and higher-order functions
SELECT arrayEnumerateUniq([1, 1, 2]) AS a, arrayEnumerateDense([10, 20, 10]) AS b, arrayDifference([1, 4, 9]) AS c, arrayCumSumNonNegative([1, -3, 2]) AS d;
SELECT arraySort((x, y) -> y, ['a', 'b', 'c'], [3, 1, 2]) AS a, arrayFill(x -> x > 0, [1, 0, 2, 0]) AS b, arrayReverseFill(x -> x > 0, [0, 1, 0, 2]) AS c;
SELECT arrayAUCPR([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) AS a, arrayLevenshteinDistance([1, 2], [1, 3]) AS b, arrayJaccardIndex([1, 2], [2, 3]) AS c, arraySymmetricDifference([1, 2], [2, 3]) AS d;
SELECT [[[1]], [[2, 3]]] AS a, arrayZipUnaligned([1, 2], ['a']) AS b, [[NULL], []] AS c, [(NULL, 'x')] AS d;
SELECT arrayMap((x, i) -> (i, x), ['a', 'b'], [1, 2]) AS a, arrayRandomSample([1], 1) AS b, arrayNormalizedGini([0.9, 0.3], [1, 0]) AS c;
-- more maps, tuples, nested
SELECT mapConcat(map('a', 1), map('b', 2)) AS a, mapExists((k, v) -> v = 2, map('a', 1, 'b', 2)) AS b, mapPartialSort((k, v) -> v, 1, map('a', 3, 'b', 1)) AS c, mapUpdate(map('a', 1), map('a', 2)) AS d;
SELECT map('k', map('x', [1])) AS a, map(1, (2, 'q')) AS b, map('a', NULL)['b'] AS c, mapKeys(map()) AS d;
SELECT tupleHammingDistance((1, 2), (1, 3)) AS a, tupleDivide((4, 6), (2, 3)) AS b, flattenTuple(CAST((1, (2, 3)) AS Tuple(a Int8, b Tuple(c Int8, d Int8)))) AS c;
SELECT CAST([(1, 'a'), (2, 'b')] AS Nested(x UInt8, y String)) AS n;
-- more conversions and number formatting
SELECT toString(1e-7) AS a, toString(123456789.123) AS b, toString(toFloat32(0.1)) AS c, toString(-0.) AS d, toString(1e21) AS e, toString(toDecimal64(-0.5, 2)) AS f;
SELECT toDecimal128(1, 30) / 3 AS a, toDecimal64(1, 2) * toDecimal64(1, 3) AS b, toDecimal32(9.99, 2) + 1 AS c, toDecimal256(-1, 40) AS d;
SELECT toUInt256('1') - 2 AS a, toInt128(-1) * 3 AS b, intDiv(toUInt128(10), 3) AS c, toUInt64(-1) AS d, toInt8(200) AS e;
SELECT reinterpretAsFloat64(reinterpretAsString(1.5)) AS a, toFloat32OrNull('1e39') AS b, toFloat64('inf') AS c, toFloat64('-nan') AS d, parseReadableSize('1.5 KiB') AS e;
SELECT toIPv6('1.2.3.4') AS a, cutIPv6(toIPv6('2001:db8::1'), 8, 0) AS b, toIPv4('0.0.0.0') AS c, IPv6NumToString(toFixedString(unhex('20010db8000000000000000000000001'), 16)) AS d;
SELECT generateUUIDv7() > toUUID('00000000-0000-0000-0000-000000000000') AS a, UUIDNumToString(toFixedString(unhex('61f0c4045cb311e7907ba6006ad3dba0'), 16)) AS b;
SELECT CAST('b' AS Enum8('a' = 1, 'b' = 2)) = 'b' AS a, [CAST('a' AS Enum8('a' = 1, 'b' = 2))] AS b, toTypeName(CAST('a' AS Enum16('a' = 1))) AS c;
-- aggregates with combinators
SELECT sumArray([[1, 2], [3]][1]) AS a, groupArrayIf(number, number % 2 = 0) AS b, uniqExactIf(number, number > 2) AS c, sumOrNull(number) AS d FROM numbers(5);
SELECT countDistinct(number % 3) AS a, groupConcat(toString(number), ',') AS b, groupArraySorted(2)(number) AS c, anyHeavy(number % 2) AS d FROM numbers(7);
SELECT minMap([1, 2], [5, 3]) AS a, quantilesExact(0.25, 0.75)(number) AS b, entropy(number % 2) AS c, skewPop(number) AS d, kurtPop(number) AS e FROM numbers(10);
SELECT argMaxState(number, number) IS NOT NULL AS a, sumDistinct(number % 3) AS b, avgWeighted(number, number) AS c, rankCorr(number, number * 2) AS d FROM numbers(10);
