-- genproto.lua: generates the C protocol codec from the Kafka JSON
-- message schemas.
--
--   lua5.4 tools/gen/genproto.lua <schema dir> <output dir>
--
-- For every *Request.json/*Response.json pair with valid versions it
-- writes kp_<api>.h/.c (both directions), for every header/data schema
-- kp_<name>.h/.c, and the kp_apis.h/.c table and kp_all.h. Output is a
-- pure function of the schemas: files and structs are emitted in sorted
-- or schema order, never in hash order, so tools/gen/check can diff a
-- regeneration against the committed tree. Naming and layout rules are in
-- docs/protocol.md; the helpers the output calls are core/proto/kp_codec.h.
local script_dir = (arg[0]:match("^(.*)/[^/]*$") or ".")
package.path = script_dir .. "/?.lua;" .. package.path
local json = require("json")

local SCHEMA_VERSION = "4.3.0"
local INF = 0x7fff

local schema_dir, out_dir = arg[1], arg[2]
if not schema_dir or not out_dir then
    io.stderr:write("usage: genproto.lua <schema dir> <output dir>\n")
    os.exit(2)
end

---------------------------------------------------------------- helpers

local function die(fmt, ...)
    error(string.format(fmt, ...), 0)
end

-- "0+", "3-5", "7", "none" -> {lo, hi} or nil (no version).
local function parse_range(s, what)
    if s == nil then return nil end
    s = tostring(s)
    if s == "none" then return nil end
    local lo = s:match("^(%d+)%+$")
    if lo then return { lo = tonumber(lo), hi = INF } end
    local a, b = s:match("^(%d+)%-(%d+)$")
    if a then return { lo = tonumber(a), hi = tonumber(b) } end
    local v = s:match("^(%d+)$")
    if v then return { lo = tonumber(v), hi = tonumber(v) } end
    die("%s: bad version range '%s'", what, s)
end

local function intersect(a, b)
    if not a or not b then return nil end
    local lo, hi = math.max(a.lo, b.lo), math.min(a.hi, b.hi)
    if lo > hi then return nil end
    return { lo = lo, hi = hi }
end

local function range_text(r)
    if not r then return "none" end
    if r.hi == INF then return r.lo .. "+" end
    if r.lo == r.hi then return tostring(r.lo) end
    return r.lo .. "-" .. r.hi
end

-- snake_case of a Kafka name. An underscore goes between a lower-case
-- letter or digit and the upper-case letter after it, and before the
-- last capital of an acronym that starts a new word: ThrottleTimeMs ->
-- throttle_time_ms, ISRNodes -> isr_nodes, TopicId -> topic_id.
local function snake(name)
    local s = name:gsub("(%u)(%u%l)", "%1_%2")
    s = s:gsub("(%u)(%u%l)", "%1_%2")
    s = s:gsub("([%l%d])(%u)", "%1_%2")
    return s:lower()
end

local C_KEYWORDS = {}
for w in ([[auto break case char const continue default do double else enum extern
    float for goto if inline int long register restrict return short signed sizeof
    static struct switch typedef union unsigned void volatile while bool true false]]):gmatch("%S+") do
    C_KEYWORDS[w] = true
end

local function field_cname(name)
    local s = snake(name)
    if C_KEYWORDS[s] then s = s .. "_" end
    return s
end

local function c_string_literal(s)
    return '"' .. s:gsub('[\\"]', "\\%0"):gsub("\n", "\\n") .. '"'
end

local function read_file(path)
    local f = assert(io.open(path, "rb"))
    local t = f:read("a")
    f:close()
    return t
end

local function list_schemas(dir)
    local names = {}
    local p = assert(io.popen("ls -1 '" .. dir .. "'"))
    for line in p:lines() do
        if line:match("%.json$") then names[#names + 1] = line end
    end
    p:close()
    table.sort(names)
    return names
end

---------------------------------------------------------------- model

local PRIM = {
    bool = { c = "bool", arr = "kp_bool_array", rd = "kn_rd_bool(%s)", wr = "kn_wr_bool(%s, %s)", size = 1 },
    int8 = { c = "int8_t", arr = "kp_int8_array", rd = "kn_rd_i8(%s)", wr = "kn_wr_i8(%s, %s)", size = 1 },
    int16 = { c = "int16_t", arr = "kp_int16_array", rd = "kn_rd_i16(%s)", wr = "kn_wr_i16(%s, %s)", size = 2 },
    uint16 = { c = "uint16_t", arr = "kp_uint16_array", rd = "kn_rd_u16(%s)", wr = "kn_wr_i16(%s, (int16_t)%s)", size = 2 },
    int32 = { c = "int32_t", arr = "kp_int32_array", rd = "kn_rd_i32(%s)", wr = "kn_wr_i32(%s, %s)", size = 4 },
    uint32 = { c = "uint32_t", arr = "kp_uint32_array", rd = "kn_rd_u32(%s)", wr = "kn_wr_u32(%s, %s)", size = 4 },
    int64 = { c = "int64_t", arr = "kp_int64_array", rd = "kn_rd_i64(%s)", wr = "kn_wr_i64(%s, %s)", size = 8 },
    float64 = { c = "double", arr = "kp_float64_array", rd = "kn_rd_f64(%s)", wr = "kn_wr_f64(%s, %s)", size = 8 },
    uuid = { c = "kn_uuid", arr = "kp_uuid_array", rd = "kn_rd_uuid(%s)", wr = "kn_wr_uuid(%s, &%s)", size = 16 },
    string = { c = "kn_str", arr = "kp_str_array", size = 1 },
    bytes = { c = "kn_bytes", arr = "kp_bytes_array", size = 1 },
    records = { c = "kn_bytes", size = 1 },
}

local INT_TYPES = { int8 = true, int16 = true, uint16 = true, int32 = true, uint32 = true, int64 = true }

-- Builds the model of one schema: its structs (post-order: a struct comes
-- after every struct it contains) and the top-level struct.
local function build_message(schema, file)
    local msg = {
        file = file,
        name = schema.name,
        type = schema.type,
        api_key = schema.apiKey,
        valid = parse_range(schema.validVersions, file),
        flex = parse_range(schema.flexibleVersions or "none", file),
        listeners = schema.listeners or {},
        unstable_latest = schema.latestVersionUnstable == true,
        structs = {},
    }
    if not msg.valid then return msg end
    local defs = {} -- struct name -> raw field list
    for _, cs in ipairs(schema.commonStructs or {}) do
        if defs[cs.name] then die("%s: duplicate struct %s", file, cs.name) end
        defs[cs.name] = { fields = cs.fields, common = true }
    end

    local built = {} -- name -> struct model
    local building = {}
    local build_struct

    local function build_field(f, owner)
        local fld = {
            name = f.name,
            cname = field_cname(f.name),
            versions = intersect(parse_range(f.versions, file .. ":" .. f.name), msg.valid),
            ignorable = f.ignorable == true,
            tag = f.tag,
            nullable = intersect(parse_range(f.nullableVersions or "none", file), msg.valid),
            tagged = intersect(parse_range(f.taggedVersions or "none", file), msg.valid),
            compact_never = f.flexibleVersions == "none",
            versions_text = tostring(f.versions),
            tagged_text = f.taggedVersions and tostring(f.taggedVersions),
            nullable_text = f.nullableVersions and tostring(f.nullableVersions),
        }
        if f.default ~= nil then fld.default = tostring(f.default) end
        if f.flexibleVersions and f.flexibleVersions ~= "none" then
            die("%s: field %s: only flexibleVersions \"none\" is supported", file, f.name)
        end
        if fld.tag ~= nil and f.taggedVersions == nil then die("%s: %s has a tag but no taggedVersions", file, f.name) end
        -- Versions where the field is a regular (positional) field.
        fld.regular = fld.versions
        if fld.tag ~= nil and fld.versions then
            local t = parse_range(f.taggedVersions, file)
            if t.hi ~= INF then die("%s: %s: bounded taggedVersions unsupported", file, f.name) end
            fld.regular = intersect(fld.versions, { lo = 0, hi = t.lo - 1 })
        end
        local ty = f.type
        local elem = ty:match("^%[%](.+)$")
        local base = elem or ty
        if PRIM[base] then
            fld.kind = elem and "parray" or "prim"
            fld.ptype = base
            if elem and base == "records" then die("%s: array of records", file) end
        else
            if not base:match("^%u") then die("%s: unknown type %s", file, ty) end
            if f.fields then
                if defs[base] and not defs[base].inline_of then
                    die("%s: struct %s defined twice", file, base)
                end
                defs[base] = { fields = f.fields, inline_of = f.name }
            elseif not defs[base] then
                die("%s: struct %s has no definition", file, base)
            end
            fld.kind = elem and "sarray" or "struct"
            fld.struct = build_struct(base)
            -- A nullable struct is a pointer (NULL = null); on the wire an
            -- int8 marker (-1 null, 1 present) precedes it in the
            -- versions where it is nullable.
            if fld.kind == "struct" and fld.nullable then
                if tostring(f.default) ~= "null" then
                    die("%s: nullable struct %s without default null", file, f.name)
                end
                fld.ptr = true
            end
        end
        if fld.default == "null" then
            fld.default_null = true
        end
        return fld
    end

    function build_struct(name, top)
        if built[name] then return built[name] end
        if building[name] then die("%s: recursive struct %s", file, name) end
        building[name] = true
        local def = top or defs[name]
        local st = {
            name = name,
            cname = top and ("kp_" .. name) or ("kp_" .. msg.name .. "_" .. name),
            top = top ~= nil,
            fields = {},
        }
        local seen = {}
        for _, f in ipairs(def.fields or {}) do
            local fld = build_field(f, st)
            if seen[fld.cname] then die("%s: %s: two fields named %s", file, name, fld.cname) end
            seen[fld.cname] = true
            st.fields[#st.fields + 1] = fld
        end
        -- Tagged fields, in tag order (the wire order on encode).
        st.tagged = {}
        for _, fld in ipairs(st.fields) do
            if fld.tag ~= nil and fld.tagged then st.tagged[#st.tagged + 1] = fld end
        end
        table.sort(st.tagged, function(a, b) return a.tag < b.tag end)
        building[name] = nil
        built[name] = st
        msg.structs[#msg.structs + 1] = st
        return st
    end

    msg.top = build_struct(msg.name, { fields = schema.fields })
    return msg
end

---------------------------------------------------------------- sizes

-- The fewest bytes one struct can take on the wire, over every valid
-- version: the per-element floor for the array-count check on decode.
local function in_range(r, v) return r ~= nil and v >= r.lo and v <= r.hi end

local struct_min_size
local function field_min_size(msg, fld, v)
    local flex = in_range(msg.flex, v) and not fld.compact_never
    if not in_range(fld.regular, v) then return 0 end
    if fld.kind == "prim" then
        local t = fld.ptype
        if t == "string" then return flex and 1 or 2 end
        if t == "bytes" or t == "records" then return flex and 1 or 4 end
        return PRIM[t].size
    elseif fld.kind == "struct" then
        if fld.ptr and in_range(fld.nullable, v) then return 1 end
        return struct_min_size(msg, fld.struct, v)
    end
    return flex and 1 or 4
end

function struct_min_size(msg, st, v)
    local n = in_range(msg.flex, v) and 1 or 0
    for _, fld in ipairs(st.fields) do n = n + field_min_size(msg, fld, v) end
    return n
end

local function struct_min_size_all(msg, st, r)
    local best
    r = intersect(r, msg.valid)
    for v = r.lo, r.hi do
        local n = struct_min_size(msg, st, v)
        if not best or n < best then best = n end
    end
    return best
end

---------------------------------------------------------------- conditions

-- C condition for "version in r" given the message's valid range: nil
-- when never, "" when always.
local function cond(msg, r)
    r = intersect(r, msg.valid)
    if not r then return nil end
    local parts = {}
    if r.lo > msg.valid.lo then parts[#parts + 1] = "version >= " .. r.lo end
    if r.hi < msg.valid.hi then parts[#parts + 1] = "version <= " .. r.hi end
    if r.lo == r.hi and #parts == 2 then return "version == " .. r.lo end
    return table.concat(parts, " && ")
end

-- As a C boolean expression ("true"/"false" when constant).
local function cond_expr(msg, r)
    local c = cond(msg, r)
    if c == nil then return "false" end
    if c == "" then return "true" end
    return c
end

local function compact_expr(msg, fld)
    if fld.compact_never or not msg.flex then return "false" end
    return "flex"
end

---------------------------------------------------------------- defaults

local function int_literal(ptype, v)
    local n = math.tointeger(tonumber(v))
    if not n then die("bad integer default '%s'", v) end
    if ptype == "int64" then
        if n == math.maxinteger then return "INT64_MAX" end
        if n == math.mininteger then return "INT64_MIN" end
        return "INT64_C(" .. v .. ")"
    end
    if ptype == "int32" and n == -2147483648 then return "INT32_MIN" end
    if ptype == "uint32" then return v .. "u" end
    return v
end

-- The default of a scalar field as a C expression (nil: zero).
local function scalar_default(fld)
    local d = fld.default
    local t = fld.ptype
    if INT_TYPES[t] then
        if d == nil or tonumber(d) == 0 then return nil end
        return int_literal(t, d)
    elseif t == "float64" then
        if d == nil or tonumber(d) == 0 then return nil end
        return tostring(tonumber(d))
    elseif t == "bool" then
        if d == nil or d == "false" then return nil end
        if d ~= "true" then die("bad bool default %s", d) end
        return "true"
    end
    return nil
end

-- Whether a string/bytes/records/array field defaults to null.
local function defaults_null(fld)
    if fld.default_null then return true end
    -- Java's records default is null.
    if fld.kind == "prim" and fld.ptype == "records" then return true end
    return false
end

-- C expression: is the field (accessed as acc) at its default?
local is_default_expr
function is_default_expr(fld, acc, need_isdef)
    if fld.kind == "prim" then
        local t = fld.ptype
        if t == "string" then
            if defaults_null(fld) then return acc .. ".len < 0" end
            local d = fld.default or ""
            if d == "" then return acc .. ".len == 0" end
            return ("kp_str_is(%s, %s, %d)"):format(acc, c_string_literal(d), #d)
        elseif t == "bytes" or t == "records" then
            if defaults_null(fld) then return acc .. ".len < 0" end
            return acc .. ".len == 0"
        elseif t == "uuid" then
            return "kn_uuid_is_zero(&" .. acc .. ")"
        elseif t == "bool" then
            return scalar_default(fld) and acc or ("!" .. acc)
        else
            return ("%s == %s"):format(acc, scalar_default(fld) or "0")
        end
    elseif fld.kind == "parray" or fld.kind == "sarray" then
        if defaults_null(fld) then return acc .. ".count < 0" end
        return acc .. ".count == 0"
    else
        if fld.ptr then return "!" .. acc end
        need_isdef[fld.struct] = true
        return ("%s_is_default(&%s)"):format(fld.struct.cname, acc)
    end
end

---------------------------------------------------------------- emitter

local Out = {}
Out.__index = Out
local function new_out() return setmetatable({ lines = {} }, Out) end
function Out:line(ind, s)
    if s == nil then s, ind = ind, 0 end
    if s == "" then
        self.lines[#self.lines + 1] = ""
    else
        self.lines[#self.lines + 1] = string.rep("    ", ind) .. s
    end
end
function Out:text() return table.concat(self.lines, "\n") .. "\n" end

local function field_ctype(fld)
    if fld.kind == "prim" then return PRIM[fld.ptype].c end
    if fld.kind == "parray" then return PRIM[fld.ptype].arr end
    if fld.kind == "sarray" then return fld.struct.cname .. "_array" end
    if fld.ptr then return fld.struct.cname .. " *" end
    return fld.struct.cname
end

local function field_comment(fld)
    local parts = { "v" .. fld.versions_text }
    if fld.tag ~= nil then parts[#parts + 1] = ("tag %d v%s"):format(fld.tag, fld.tagged_text) end
    if fld.nullable then parts[#parts + 1] = "nullable v" .. fld.nullable_text end
    if fld.default ~= nil then parts[#parts + 1] = "default " .. fld.default end
    if fld.ignorable then parts[#parts + 1] = "ignorable" end
    return table.concat(parts, ", ")
end

-- Element read/write for primitive element types.
local function prim_read(msg, fld, rv, lhs, elem)
    local t = fld.ptype
    local compact = compact_expr(msg, fld)
    local nullable = elem and "false" or cond_expr(msg, fld.nullable)
    if t == "string" then
        return ("%s = kp_rd_str(%s, %s, %s);"):format(lhs, rv, compact, nullable)
    elseif t == "bytes" or t == "records" then
        return ("%s = kp_rd_bytes(%s, %s, %s);"):format(lhs, rv, compact, nullable)
    end
    return ("%s = %s;"):format(lhs, PRIM[t].rd:format(rv))
end

local function prim_write(msg, fld, ind, o, acc, elem)
    local t = fld.ptype
    local compact = compact_expr(msg, fld)
    local nullable = elem and "false" or cond_expr(msg, fld.nullable)
    if t == "string" then
        o:line(ind, ("if ((rc = kp_wr_str(w, %s, %s, %s)) != 0)"):format(acc, compact, nullable))
        o:line(ind + 1, "return rc;")
    elseif t == "bytes" or t == "records" then
        o:line(ind, ("if ((rc = kp_wr_bytes(w, %s, %s, %s)) != 0)"):format(acc, compact, nullable))
        o:line(ind + 1, "return rc;")
    else
        o:line(ind, PRIM[t].wr:format("w", acc) .. ";")
    end
end

-- Emits the read of one field (present in this version) from reader rv.
-- Inside a tagged field rv is the field's sub-reader, whose error must
-- reach r before returning.
local function emit_field_read(msg, o, ind, fld, rv, acc)
    local function ret(e)
        if rv == "r" then return "return " .. e .. ";" end
        return ("return kp_rd_sub_fail(r, %s, %s);"):format(rv, e)
    end
    if fld.kind == "prim" then
        o:line(ind, prim_read(msg, fld, rv, acc, false))
    elseif fld.kind == "struct" and fld.ptr then
        local nc = cond(msg, fld.nullable)
        o:line(ind, "{")
        if nc == "" then
            o:line(ind + 1, ("bool present = kn_rd_i8(%s) >= 0;"):format(rv))
        elseif nc == nil then
            o:line(ind + 1, "bool present = true;")
        else
            o:line(ind + 1, ("bool present = !(%s) || kn_rd_i8(%s) >= 0;"):format(nc, rv))
        end
        o:line(ind + 1, ("if (!kn_rd_ok(%s))"):format(rv))
        o:line(ind + 2, ret("KN_ERR__PROTOCOL"))
        o:line(ind + 1, "if (present) {")
        o:line(ind + 2, ("%s = kp_arena_items(a, 1, sizeof *%s);"):format(acc, acc))
        o:line(ind + 2, ("if (!%s)"):format(acc))
        o:line(ind + 3, "return KN_ERR__NOMEM;")
        o:line(ind + 2, ("if ((rc = %s_decode(%s, a, %s, version)) != 0)"):format(fld.struct.cname, rv, acc))
        o:line(ind + 3, ret("rc"))
        o:line(ind + 1, "}")
        o:line(ind, "}")
    elseif fld.kind == "struct" then
        o:line(ind, ("if ((rc = %s_decode(%s, a, &%s, version)) != 0)"):format(fld.struct.cname, rv, acc))
        o:line(ind + 1, ret("rc"))
    else
        local min = fld.kind == "parray" and PRIM[fld.ptype].size or struct_min_size_all(msg, fld.struct, fld.versions)
        if min < 1 then die("%s: struct %s can be empty on the wire", msg.file, fld.struct.name) end
        o:line(ind, "{")
        o:line(ind + 1, ("int32_t n = kp_rd_array_len(%s, %s, %s, %d);"):format(
            rv, compact_expr(msg, fld), cond_expr(msg, fld.nullable), min))
        o:line(ind + 1, ("if (!kn_rd_ok(%s))"):format(rv))
        o:line(ind + 2, ret("KN_ERR__PROTOCOL"))
        o:line(ind + 1, ("%s.items = kp_arena_items(a, n, sizeof *%s.items);"):format(acc, acc))
        o:line(ind + 1, ("if (n > 0 && !%s.items)"):format(acc))
        o:line(ind + 2, "return KN_ERR__NOMEM;")
        o:line(ind + 1, ("%s.count = n;"):format(acc))
        o:line(ind + 1, "for (int32_t i = 0; i < n; i++) {")
        if fld.kind == "parray" then
            o:line(ind + 2, prim_read(msg, fld, rv, acc .. ".items[i]", true))
        else
            o:line(ind + 2, ("if ((rc = %s_decode(%s, a, &%s.items[i], version)) != 0)"):format(
                fld.struct.cname, rv, acc))
            o:line(ind + 3, ret("rc"))
        end
        o:line(ind + 1, "}")
        o:line(ind, "}")
    end
end

local function emit_field_write(msg, o, ind, fld, acc)
    if fld.kind == "prim" then
        prim_write(msg, fld, ind, o, acc, false)
    elseif fld.kind == "struct" and fld.ptr then
        local nc = cond(msg, fld.nullable)
        if nc == "" then
            o:line(ind, ("kn_wr_i8(w, %s ? 1 : -1);"):format(acc))
        else
            o:line(ind, ("if (%s)"):format(nc or "false"))
            o:line(ind + 1, ("kn_wr_i8(w, %s ? 1 : -1);"):format(acc))
            o:line(ind, ("else if (!%s)"):format(acc))
            o:line(ind + 1, "return KN_ERR__INVALID_ARG;")
        end
        o:line(ind, ("if (%s && (rc = %s_encode(w, %s, version)) != 0)"):format(acc, fld.struct.cname, acc))
        o:line(ind + 1, "return rc;")
    elseif fld.kind == "struct" then
        o:line(ind, ("if ((rc = %s_encode(w, &%s, version)) != 0)"):format(fld.struct.cname, acc))
        o:line(ind + 1, "return rc;")
    else
        o:line(ind, ("if ((rc = kp_wr_array_len(w, %s.count, %s.items, %s, %s)) != 0)"):format(
            acc, acc, compact_expr(msg, fld), cond_expr(msg, fld.nullable)))
        o:line(ind + 1, "return rc;")
        o:line(ind, ("for (int32_t i = 0; i < %s.count; i++) {"):format(acc))
        if fld.kind == "parray" then
            prim_write(msg, fld, ind + 1, o, acc .. ".items[i]", true)
        else
            o:line(ind + 1, ("if ((rc = %s_encode(w, &%s.items[i], version)) != 0)"):format(fld.struct.cname, acc))
            o:line(ind + 2, "return rc;")
        end
        o:line(ind, "}")
    end
end

-- Whether a struct's code needs the `rc` variable (calls that return one).
local function needs_rc(st, dir)
    for _, fld in ipairs(st.fields) do
        if fld.kind ~= "prim" then return true end
        if dir == "enc" and (fld.ptype == "string" or fld.ptype == "bytes" or fld.ptype == "records") then
            return true
        end
    end
    if dir == "dec" and #st.tagged > 0 then return true end
    return false
end

local function uses_flex(msg, st)
    if not msg.flex then return false end
    return true -- every struct ends with a tagged-field section in flexible versions
end

local function emit_flex_decl(msg, o, st)
    if uses_flex(msg, st) then
        o:line(1, ("const bool flex = %s;"):format(cond_expr(msg, msg.flex)))
    end
end

---------------------------------------------------------------- per struct

local function emit_init(msg, o, st, static)
    local p = st.top and "m" or "s"
    o:line(("%svoid %s_init(%s *%s) {"):format(static and "static " or "", st.cname, st.cname, p))
    o:line(1, ("memset(%s, 0, sizeof *%s);"):format(p, p))
    for _, fld in ipairs(st.fields) do
        local acc = p .. "->" .. fld.cname
        if fld.kind == "prim" then
            local t = fld.ptype
            if t == "string" then
                if defaults_null(fld) then
                    o:line(1, acc .. ".len = -1;")
                else
                    local d = fld.default or ""
                    o:line(1, ("%s.ptr = %s;"):format(acc, c_string_literal(d)))
                    if #d > 0 then o:line(1, ("%s.len = %d;"):format(acc, #d)) end
                end
            elseif t == "bytes" or t == "records" then
                if defaults_null(fld) then o:line(1, acc .. ".len = -1;") end
            else
                local d = scalar_default(fld)
                if d then o:line(1, ("%s = %s;"):format(acc, d)) end
            end
        elseif fld.kind == "struct" then
            if not fld.ptr then o:line(1, ("%s_init(&%s);"):format(fld.struct.cname, acc)) end
        else
            if defaults_null(fld) then o:line(1, acc .. ".count = -1;") end
        end
    end
    o:line("}")
    o:line("")
end

local function emit_is_default(msg, o, st, need_isdef)
    o:line(("static bool %s_is_default(const %s *s) {"):format(st.cname, st.cname))
    local terms = {}
    for _, fld in ipairs(st.fields) do
        terms[#terms + 1] = is_default_expr(fld, "s->" .. fld.cname, need_isdef)
    end
    if #terms == 0 then
        o:line(1, "(void)s;")
        o:line(1, "return true;")
    else
        for i, t in ipairs(terms) do
            local pre = i == 1 and "return " or "       "
            local post = i == #terms and ";" or " &&"
            o:line(1, pre .. "(" .. t .. ")" .. post)
        end
    end
    o:line("}")
    o:line("")
end

local function version_check(msg, o)
    o:line(1, ("if (version < %d || version > %d)"):format(msg.valid.lo, msg.valid.hi))
    o:line(2, "return KN_ERR__UNSUPPORTED_VERSION;")
end

local function emit_encode(msg, o, st, need_isdef)
    local p = st.top and "m" or "s"
    local sig = ("int %s_encode(kn_wr *w, const %s *%s, int16_t version)"):format(st.cname, st.cname, p)
    o:line((st.top and "" or "static ") .. sig .. " {")
    if st.top then version_check(msg, o) end
    emit_flex_decl(msg, o, st)
    local body = new_out()
    local used_rc = false
    for _, fld in ipairs(st.fields) do
        local acc = p .. "->" .. fld.cname
        local rc = cond(msg, fld.regular)
        local absent_check = not fld.ignorable
        local tagged_c = fld.tagged and cond(msg, fld.tagged)
        -- A value the peer would never see is a caller error unless the
        -- schema marks the field ignorable.
        local function absent_cond()
            local c = "!(" .. is_default_expr(fld, acc, need_isdef) .. ")"
            if tagged_c and msg.flex then
                c = (tagged_c == "" and "!flex" or ("!(flex && " .. tagged_c .. ")")) .. " && " .. c
            end
            return c
        end
        if rc == "" then
            emit_field_write(msg, body, 1, fld, acc)
        elseif rc then
            body:line(1, ("if (%s) {"):format(rc))
            emit_field_write(msg, body, 2, fld, acc)
            if absent_check then
                body:line(1, ("} else if (%s) {"):format(absent_cond()))
                body:line(2, "return KN_ERR__INVALID_ARG;")
            end
            body:line(1, "}")
        elseif absent_check then
            body:line(1, ("if (%s)"):format(absent_cond()))
            body:line(2, "return KN_ERR__INVALID_ARG;")
        end
    end
    if msg.flex then
        body:line(1, "if (flex) {")
        if #st.tagged == 0 then
            body:line(2, "kn_wr_uvarint(w, 0);")
        else
            body:line(2, "uint32_t ntags = 0;")
            local conds = {}
            for i, fld in ipairs(st.tagged) do
                local acc = p .. "->" .. fld.cname
                local c = "!(" .. is_default_expr(fld, acc, need_isdef) .. ")"
                local tc = cond(msg, fld.tagged)
                if tc ~= "" then c = tc .. " && " .. c end
                conds[i] = c
                body:line(2, ("const bool tag%d = %s;"):format(fld.tag, c))
            end
            for _, fld in ipairs(st.tagged) do
                body:line(2, ("ntags += tag%d;"):format(fld.tag))
            end
            body:line(2, "kn_wr_uvarint(w, ntags);")
            for _, fld in ipairs(st.tagged) do
                local acc = p .. "->" .. fld.cname
                body:line(2, ("if (tag%d) {"):format(fld.tag))
                body:line(3, ("size_t start = kp_wr_tag_begin(w, %d);"):format(fld.tag))
                emit_field_write(msg, body, 3, fld, acc)
                body:line(3, "kp_wr_tag_end(w, start);")
                body:line(2, "}")
            end
        end
        body:line(1, "}")
    end
    local text = table.concat(body.lines, "\n")
    if text:find("rc = ", 1, true) then o:line(1, "int rc;") end
    for _, l in ipairs(body.lines) do o.lines[#o.lines + 1] = l end
    o:line(1, "return w->err;")
    o:line("}")
    o:line("")
end

local function emit_decode(msg, o, st)
    local p = st.top and "m" or "s"
    local sig = ("int %s_decode(kn_rd *r, kn_arena *a, %s *%s, int16_t version)"):format(st.cname, st.cname, p)
    o:line((st.top and "" or "static ") .. sig .. " {")
    if st.top then version_check(msg, o) end
    emit_flex_decl(msg, o, st)
    local body = new_out()
    body:line(1, ("%s_init(%s);"):format(st.cname, p))
    for _, fld in ipairs(st.fields) do
        local acc = p .. "->" .. fld.cname
        local rc = cond(msg, fld.regular)
        if rc == "" then
            emit_field_read(msg, body, 1, fld, "r", acc)
        elseif rc then
            body:line(1, ("if (%s) {"):format(rc))
            emit_field_read(msg, body, 2, fld, "r", acc)
            body:line(1, "}")
        end
    end
    if msg.flex then
        if #st.tagged == 0 then
            body:line(1, "if (flex)")
            body:line(2, "kp_rd_skip_tags(r);")
        else
            body:line(1, "if (flex) {")
            body:line(2, "uint32_t ntags = kn_rd_uvarint(r);")
            body:line(2, "for (uint32_t t = 0; t < ntags && kn_rd_ok(r); t++) {")
            body:line(3, "uint32_t tag = kn_rd_uvarint(r);")
            body:line(3, "kn_rd sub;")
            body:line(3, "if (!kp_rd_tagged(r, &sub))")
            body:line(4, "break;")
            body:line(3, "switch (tag) {")
            for _, fld in ipairs(st.tagged) do
                local acc = p .. "->" .. fld.cname
                body:line(3, ("case %d:"):format(fld.tag))
                local tc = cond(msg, fld.tagged)
                local ind = 4
                if tc ~= "" then
                    body:line(4, ("if (%s) {"):format(tc))
                    ind = 5
                end
                emit_field_read(msg, body, ind, fld, "&sub", acc)
                body:line(ind, "if ((rc = kp_rd_tagged_end(r, &sub)) != 0)")
                body:line(ind + 1, "return rc;")
                if tc ~= "" then body:line(4, "}") end
                body:line(4, "break;")
            end
            body:line(3, "default:")
            body:line(4, "break; /* unknown tags are skipped */")
            body:line(3, "}")
            body:line(2, "}")
            body:line(1, "}")
        end
    end
    local text = table.concat(body.lines, "\n")
    if text:find("rc = ", 1, true) then o:line(1, "int rc;") end
    for _, l in ipairs(body.lines) do o.lines[#o.lines + 1] = l end
    o:line(1, "return kn_rd_ok(r) ? 0 : KN_ERR__PROTOCOL;")
    o:line("}")
    o:line("")
end

-- Sample filler: a deterministic non-default value in every field the
-- version carries, so round-trip tests exercise every field's codec.
local function sample_prim(fld, idx, lhs, o, ind)
    local t = fld.ptype
    if t == "string" then
        local s = "s" .. idx .. "_" .. fld.cname
        o:line(ind, ("%s = (kn_str){%s, %d};"):format(lhs, c_string_literal(s), #s))
    elseif t == "bytes" or t == "records" then
        o:line(ind, ("%s = (kn_bytes){(const uint8_t *)\"\\x01\\x02\\x03\", 3};"):format(lhs))
    elseif t == "uuid" then
        o:line(ind, ("memset(%s.b, %d, sizeof %s.b);"):format(lhs, (idx % 200) + 1, lhs))
    elseif t == "bool" then
        o:line(ind, ("%s = %s;"):format(lhs, scalar_default(fld) and "false" or "true"))
    elseif t == "float64" then
        o:line(ind, ("%s = %d.5;"):format(lhs, idx))
    else
        local v = (idx % 100) + 1
        local d = tonumber(fld.default or "0")
        if v == d then v = v + 1 end
        o:line(ind, ("%s = %d;"):format(lhs, v))
    end
end

local function emit_sample(msg, o, st)
    local p = st.top and "m" or "s"
    local sig = ("int %s_sample(%s *%s, kn_arena *a, int16_t version)"):format(st.cname, st.cname, p)
    o:line((st.top and "" or "static ") .. sig .. " {")
    local body = new_out()
    body:line(1, ("%s_init(%s);"):format(st.cname, p))
    for i, fld in ipairs(st.fields) do
        local acc = p .. "->" .. fld.cname
        local present = fld.versions
        local c = cond(msg, present)
        if c then
            local ind = 1
            if c ~= "" then
                body:line(1, ("if (%s) {"):format(c))
                ind = 2
            end
            if fld.kind == "prim" then
                sample_prim(fld, i, acc, body, ind)
            elseif fld.kind == "struct" and fld.ptr then
                body:line(ind, ("%s = kp_arena_items(a, 1, sizeof *%s);"):format(acc, acc))
                body:line(ind, ("if (!%s)"):format(acc))
                body:line(ind + 1, "return KN_ERR__NOMEM;")
                body:line(ind, ("if ((rc = %s_sample(%s, a, version)) != 0)"):format(fld.struct.cname, acc))
                body:line(ind + 1, "return rc;")
            elseif fld.kind == "struct" then
                body:line(ind, ("if ((rc = %s_sample(&%s, a, version)) != 0)"):format(fld.struct.cname, acc))
                body:line(ind + 1, "return rc;")
            else
                body:line(ind, ("%s.items = kp_arena_items(a, 2, sizeof *%s.items);"):format(acc, acc))
                body:line(ind, ("if (!%s.items)"):format(acc))
                body:line(ind + 1, "return KN_ERR__NOMEM;")
                body:line(ind, ("%s.count = 2;"):format(acc))
                body:line(ind, "for (int32_t i = 0; i < 2; i++) {")
                if fld.kind == "parray" then
                    sample_prim(fld, i, acc .. ".items[i]", body, ind + 1)
                else
                    body:line(ind + 1, ("if ((rc = %s_sample(&%s.items[i], a, version)) != 0)"):format(
                        fld.struct.cname, acc))
                    body:line(ind + 2, "return rc;")
                end
                body:line(ind, "}")
            end
            if c ~= "" then body:line(1, "}") end
        end
    end
    local text = table.concat(body.lines, "\n")
    if text:find("rc = ", 1, true) then o:line(1, "int rc;") end
    for _, l in ipairs(body.lines) do o.lines[#o.lines + 1] = l end
    o:line(1, "return 0;")
    o:line("}")
    o:line("")
end

---------------------------------------------------------------- files

local function emit_struct_decl(msg, o, st)
    o:line(("typedef struct %s {"):format(st.cname))
    if #st.fields == 0 then o:line(1, "char unused_; /* no fields: C needs a member */") end
    for _, fld in ipairs(st.fields) do
        local ct = field_ctype(fld)
        o:line(1, ("%s%s%s; /* %s */"):format(ct, ct:match("%*$") and "" or " ", fld.cname, field_comment(fld)))
    end
    o:line(("} %s;"):format(st.cname))
    o:line("")
    -- Array type, for structs used as array elements.
    if st.used_in_array then
        o:line(("typedef struct %s_array {"):format(st.cname))
        o:line(1, ("%s *items;"):format(st.cname))
        o:line(1, "int32_t count;")
        o:line(("} %s_array;"):format(st.cname))
        o:line("")
    end
end

local function mark_arrays(msg)
    for _, st in ipairs(msg.structs) do
        for _, fld in ipairs(st.fields) do
            if fld.kind == "sarray" then fld.struct.used_in_array = true end
        end
    end
end

local HEADER_NOTE = "Generated by tools/gen/genproto.lua from the Kafka " .. SCHEMA_VERSION ..
    " schemas. Do not edit."

local function describe(msg)
    local s = ("%s: versions %s"):format(msg.name, range_text(msg.valid))
    s = s .. (msg.flex and (", flexible " .. range_text(msg.flex)) or ", never flexible")
    if msg.unstable_latest then s = s .. ", latest version unstable" end
    return s
end

-- Emits the declarations of one message (structs and prototypes).
local function emit_message_decls(msg, o)
    mark_arrays(msg)
    o:line("/* " .. describe(msg) .. " */")
    o:line("")
    for _, st in ipairs(msg.structs) do emit_struct_decl(msg, o, st) end
    local c = msg.top.cname
    o:line("/* Zero + schema defaults, for the message and for each nested struct (fill")
    o:line(" * array elements with these before setting fields). */")
    for _, st in ipairs(msg.structs) do
        if not st.top then o:line(("void %s_init(%s *s);"):format(st.cname, st.cname)) end
    end
    o:line(("void %s_init(%s *m);"):format(c, c))
    o:line("/* Appends the body (no header, no size prefix). Returns 0, KN_ERR__UNSUPPORTED_VERSION,")
    o:line(" * KN_ERR__INVALID_ARG (a field this version cannot carry holds a value, or a null where")
    o:line(" * the schema forbids one) or the writer's error. Only reads m. */")
    o:line(("int %s_encode(kn_wr *w, const %s *m, int16_t version);"):format(c, c))
    o:line("/* Fills m from r. Strings and bytes point into r's buffer, arrays live in a: both must")
    o:line(" * outlive m. Returns 0, KN_ERR__PROTOCOL (r->err_off/err_what say where), KN_ERR__NOMEM")
    o:line(" * or KN_ERR__UNSUPPORTED_VERSION. */")
    o:line(("int %s_decode(kn_rd *r, kn_arena *a, %s *m, int16_t version);"):format(c, c))
    o:line("/* Tests and fuzz seeds: a non-default value in every field of this version; arrays")
    o:line(" * (two elements each) live in a. Returns 0 or KN_ERR__NOMEM. */")
    o:line(("int %s_sample(%s *m, kn_arena *a, int16_t version);"):format(c, c))
    o:line("")
end

local function emit_message_defs(msg, o)
    o:line("/* ---- " .. msg.name .. " ---- */")
    o:line("")
    -- Which structs need an is_default function is only known once the
    -- encoders (and the is_default functions themselves) are generated:
    -- find the closure first, then emit in post-order (msg.structs puts a
    -- struct after the structs it contains), so every static function is
    -- defined before its first use.
    local need_isdef = {}
    for _, st in ipairs(msg.structs) do emit_encode(msg, new_out(), st, need_isdef) end
    local done = {}
    local changed = true
    while changed do
        changed = false
        for _, st in ipairs(msg.structs) do
            if need_isdef[st] and not done[st] then
                done[st] = true
                changed = true
                emit_is_default(msg, new_out(), st, need_isdef)
            end
        end
    end
    for _, st in ipairs(msg.structs) do emit_init(msg, o, st, false) end
    for _, st in ipairs(msg.structs) do
        if need_isdef[st] then emit_is_default(msg, o, st, {}) end
    end
    for _, st in ipairs(msg.structs) do
        emit_encode(msg, o, st, {})
        emit_decode(msg, o, st)
        emit_sample(msg, o, st)
    end
end

local function write_file(path, text)
    local f = assert(io.open(path, "wb"))
    f:write(text)
    f:close()
end

local function guard_of(fname)
    return fname:upper():gsub("[^%w]", "_")
end

-- One header/source pair holding one or more messages.
local function emit_pair(base, msgs, summary)
    local h = new_out()
    h:line("/*")
    h:line(" * " .. base .. ".h: " .. summary)
    h:line(" *")
    h:line(" * " .. HEADER_NOTE)
    h:line(" */")
    local g = guard_of(base .. "_H")
    h:line("#ifndef " .. g)
    h:line("#define " .. g)
    h:line("")
    h:line('#include "proto/kp_types.h"')
    h:line("")
    for _, m in ipairs(msgs) do emit_message_decls(m, h) end
    h:line("#endif")
    write_file(out_dir .. "/" .. base .. ".h", h:text())

    local c = new_out()
    c:line("/*")
    c:line(" * " .. base .. ".c: " .. summary)
    c:line(" *")
    c:line(" * " .. HEADER_NOTE)
    c:line(" */")
    c:line('#include "proto/generated/' .. base .. '.h"')
    c:line("")
    c:line("#include <string.h>")
    c:line("")
    c:line('#include "proto/kp_codec.h"')
    c:line("")
    for _, m in ipairs(msgs) do emit_message_defs(m, c) end
    -- Drop the trailing blank line.
    while c.lines[#c.lines] == "" do c.lines[#c.lines] = nil end
    write_file(out_dir .. "/" .. base .. ".c", c:text())
end

---------------------------------------------------------------- main

-- KIP-219: from which version a response's throttle_time_ms asks the
-- client to wait (the broker answered first and mutes the connection);
-- in older versions the broker delayed the answer itself. The schemas
-- say so in a comment ("Starting in version N, on quota violation,
-- brokers send out responses before throttling"); an API born after
-- KIP-219 has no such note and throttles from its field's first
-- version. ProduceResponse.json lost its note when versions 0-2 were
-- removed: Java's ProduceResponse.shouldClientThrottle says 6.
local THROTTLE_FROM_OVERRIDE = { Produce = 6 }

local function throttle_from(api, text)
    if THROTTLE_FROM_OVERRIDE[api.name] then return THROTTLE_FROM_OVERRIDE[api.name] end
    local v = text:match("Starting in version (%d+), on quota violation")
    local fld
    for _, f in ipairs(api.resp.top.fields) do
        if f.name == "ThrottleTimeMs" and f.versions then fld = f end
    end
    if not fld then return -1 end
    return v and tonumber(v) or fld.versions.lo
end

local apis = {}  -- key -> {name, req, resp}
local datas = {} -- list of data/header messages
for _, fname in ipairs(list_schemas(schema_dir)) do
    local text = read_file(schema_dir .. "/" .. fname)
    local ok, schema = pcall(json.decode, text)
    if not ok then die("%s: %s", fname, schema) end
    local ok2, msg = pcall(build_message, schema, fname)
    if not ok2 then die("%s", msg) end
    if schema.apiKey ~= nil then
        local api_name = schema.name:gsub("Request$", ""):gsub("Response$", "")
        local api = apis[schema.apiKey] or { key = schema.apiKey, name = api_name }
        if api.name ~= api_name then die("%s: api key %d is also %s", fname, schema.apiKey, api.name) end
        if schema.type == "request" then
            api.req = msg
        elseif schema.type == "response" then
            api.resp = msg
            api.resp_text = text
        else
            die("%s: apiKey on a %s schema", fname, schema.type)
        end
        apis[schema.apiKey] = api
    elseif schema.type == "data" or schema.type == "header" then
        if msg.valid then datas[#datas + 1] = msg end
    end
end

local keys = {}
for k, api in pairs(apis) do
    if not api.req or not api.resp then die("api %s lacks a request or response schema", api.name) end
    if api.req.valid then
        if not api.resp.valid or api.req.valid.lo ~= api.resp.valid.lo or api.req.valid.hi ~= api.resp.valid.hi then
            die("api %s: request and response versions differ", api.name)
        end
        keys[#keys + 1] = k
    end
end
table.sort(keys)
table.sort(datas, function(a, b) return a.name < b.name end)

os.execute("mkdir -p '" .. out_dir .. "'")

local all_headers = {}
-- KRaft-internal: an API no broker listener serves (controller-to-
-- controller and broker-to-controller traffic). A client never sends
-- one, so its codec is kept out of the library (kp_internal_apis.txt).
local internal_files = {}
for _, k in ipairs(keys) do
    local api = apis[k]
    local served_by_broker = false
    for _, l in ipairs(api.req.listeners) do
        if l == "broker" then served_by_broker = true end
    end
    api.internal = not served_by_broker
    api.base = "kp_" .. snake(api.name)
    if api.internal then internal_files[#internal_files + 1] = api.base .. ".c" end
    api.enum = "KP_API_" .. snake(api.name):upper()
    emit_pair(api.base, { api.req, api.resp },
        ("the %s API (key %d): request and response structs and codecs."):format(api.name, k))
    all_headers[#all_headers + 1] = api.base .. ".h"
end
for _, d in ipairs(datas) do
    d.base = "kp_" .. snake(d.name)
    emit_pair(d.base, { d }, ("the %s %s schema: struct and codec."):format(d.name, d.type))
    all_headers[#all_headers + 1] = d.base .. ".h"
end

-- kp_apis.h / kp_apis.c: the table over every API and data schema.
do
    local h = new_out()
    h:line("/*")
    h:line(" * kp_apis.h: the table of every Kafka API this codec knows (key, name, versions,")
    h:line(" * first flexible version, codec entry points on void pointers) and of the")
    h:line(" * non-API data schemas, for code that works on any message: version")
    h:line(" * negotiation, the request pipeline, tests and fuzzers.")
    h:line(" *")
    h:line(" * " .. HEADER_NOTE)
    h:line(" */")
    h:line("#ifndef KP_APIS_H")
    h:line("#define KP_APIS_H")
    h:line("")
    h:line('#include "proto/kp_types.h"')
    h:line("")
    h:line("typedef enum kp_api_key {")
    for _, k in ipairs(keys) do
        h:line(1, ("%s = %d,"):format(apis[k].enum, k))
    end
    h:line("} kp_api_key;")
    h:line("")
    h:line(("#define KP_API_KEY_MAX %d"):format(keys[#keys]))
    h:line(("#define KP_API_COUNT %d"):format(#keys))
    h:line("")
    h:line("/* Listener bits: where the broker serves an API. */")
    h:line("#define KP_LISTENER_BROKER 0x1u")
    h:line("#define KP_LISTENER_CONTROLLER 0x2u")
    h:line("")
    h:line("typedef struct kp_api {")
    h:line(1, "int16_t key;")
    h:line(1, "const char *name;")
    h:line(1, "int16_t min_version, max_version;")
    h:line(1, "int16_t first_flexible; /* -1 none */")
    h:line(1, "size_t req_size, resp_size;")
    h:line(1, "/* NULL for a KRaft-internal API (listeners == KP_LISTENER_CONTROLLER)")
    h:line(1, " * unless kp_apis.c was built with KP_WITH_INTERNAL_APIS (tests only). */")
    h:line(1, "void (*req_init)(void *);")
    h:line(1, "int (*req_encode)(kn_wr *, const void *, int16_t);")
    h:line(1, "int (*req_decode)(kn_rd *, kn_arena *, void *, int16_t);")
    h:line(1, "void (*resp_init)(void *);")
    h:line(1, "int (*resp_encode)(kn_wr *, const void *, int16_t);")
    h:line(1, "int (*resp_decode)(kn_rd *, kn_arena *, void *, int16_t);")
    h:line(1, "/* Tests and fuzz seeds: see kp_<Message>_sample. */")
    h:line(1, "int (*req_sample)(void *, kn_arena *, int16_t);")
    h:line(1, "int (*resp_sample)(void *, kn_arena *, int16_t);")
    h:line(1, "uint32_t listeners;          /* KP_LISTENER_* */")
    h:line(1, "int16_t max_stable_version; /* max_version - 1 when the latest is unstable */")
    h:line(1, "/* KIP-219: the first version whose response's throttle_time_ms (at")
    h:line(1, " * throttle_offset in the response struct) the client must wait out")
    h:line(1, " * itself; the broker delayed older answers. -1: no throttle field. */")
    h:line(1, "int16_t throttle_from;")
    h:line(1, "uint16_t throttle_offset;")
    h:line("} kp_api;")
    h:line("")
    h:line("/* The API with this key, or NULL. Static storage. */")
    h:line("const kp_api *kp_api_get(int16_t key);")
    h:line("/* The i-th API in key order (i < KP_API_COUNT), or NULL. */")
    h:line("const kp_api *kp_api_at(size_t i);")
    h:line("")
    h:line("/* A schema that is not an API message (headers, consumer-protocol blobs, records). */")
    h:line("typedef struct kp_data_type {")
    h:line(1, "const char *name;")
    h:line(1, "int16_t min_version, max_version;")
    h:line(1, "int16_t first_flexible; /* -1 none */")
    h:line(1, "size_t size;")
    h:line(1, "void (*init)(void *);")
    h:line(1, "int (*encode)(kn_wr *, const void *, int16_t);")
    h:line(1, "int (*decode)(kn_rd *, kn_arena *, void *, int16_t);")
    h:line(1, "int (*sample)(void *, kn_arena *, int16_t);")
    h:line("} kp_data_type;")
    h:line("")
    h:line(("#define KP_DATA_TYPE_COUNT %d"):format(#datas))
    h:line("/* The i-th data schema in name order (i < KP_DATA_TYPE_COUNT), or NULL. */")
    h:line("const kp_data_type *kp_data_type_at(size_t i);")
    h:line("/* The data schema with this name (\"ConsumerProtocolAssignment\"), or NULL. */")
    h:line("const kp_data_type *kp_data_type_get(const char *name);")
    h:line("")
    h:line("#endif")
    write_file(out_dir .. "/kp_apis.h", h:text())

    local c = new_out()
    c:line("/*")
    c:line(" * kp_apis.c: the API and data-schema tables (see kp_apis.h). The wrappers adapt")
    c:line(" * each typed codec function to the table's void-pointer signatures.")
    c:line(" *")
    c:line(" * " .. HEADER_NOTE)
    c:line(" */")
    c:line('#include "proto/generated/kp_apis.h"')
    c:line("")
    c:line("#include <stddef.h>")
    c:line("#include <string.h>")
    c:line("")
    c:line('#include "proto/generated/kp_all.h"')
    c:line("")
    local function wrappers(prefix, tname)
        c:line(("static void %s_init(void *m) { %s_init(m); }"):format(prefix, tname))
        c:line(("static int %s_encode(kn_wr *w, const void *m, int16_t v) { return %s_encode(w, m, v); }"):format(
            prefix, tname))
        c:line(("static int %s_decode(kn_rd *r, kn_arena *a, void *m, int16_t v) { return %s_decode(r, a, m, v); }")
            :format(prefix, tname))
        c:line(("static int %s_sample(void *m, kn_arena *a, int16_t v) { return %s_sample(m, a, v); }"):format(
            prefix, tname))
    end
    c:line("/* The KRaft-internal APIs (served on controller listeners only: Vote,")
    c:line(" * BrokerHeartbeat, ...) are generated and committed like every API, but")
    c:line(" * their codecs are built into the library only with KP_WITH_INTERNAL_APIS")
    c:line(" * (tests and fuzzers; see kp_internal_apis.txt): without it their rows")
    c:line(" * keep key, name and versions, with NULL codec pointers. */")
    c:line("#ifdef KP_WITH_INTERNAL_APIS")
    c:line("#define KP_INTERNAL(fn) fn")
    c:line("#else")
    c:line("#define KP_INTERNAL(fn) NULL")
    c:line("#endif")
    c:line("")
    for _, k in ipairs(keys) do
        local api = apis[k]
        local sn = snake(api.name)
        if api.internal then c:line("#ifdef KP_WITH_INTERNAL_APIS") end
        wrappers(sn .. "_req", api.req.top.cname)
        wrappers(sn .. "_resp", api.resp.top.cname)
        if api.internal then c:line("#endif") end
        c:line("")
    end
    for _, d in ipairs(datas) do
        wrappers(snake(d.name), d.top.cname)
        c:line("")
    end
    c:line("static const kp_api kp_api_table[KP_API_COUNT] = {")
    for _, k in ipairs(keys) do
        local api = apis[k]
        local sn = snake(api.name)
        local m = api.req
        local bits = {}
        local lset = {}
        for _, l in ipairs(m.listeners) do lset[l] = true end
        if lset.broker then bits[#bits + 1] = "KP_LISTENER_BROKER" end
        if lset.controller then bits[#bits + 1] = "KP_LISTENER_CONTROLLER" end
        local listeners = #bits > 0 and table.concat(bits, " | ") or "0"
        local stable = m.valid.hi
        if m.unstable_latest then stable = stable - 1 end
        c:line(1, ("{%s, %s, %d, %d, %d, sizeof(%s), sizeof(%s),"):format(api.enum, c_string_literal(api.name),
            m.valid.lo, m.valid.hi, m.flex and m.flex.lo or -1, api.req.top.cname, api.resp.top.cname))
        local function fn(suffix)
            return api.internal and ("KP_INTERNAL(%s_%s)"):format(sn, suffix) or (sn .. "_" .. suffix)
        end
        c:line(2, ("%s, %s, %s, %s, %s, %s,"):format(fn("req_init"), fn("req_encode"), fn("req_decode"),
            fn("resp_init"), fn("resp_encode"), fn("resp_decode")))
        local tf = throttle_from(api, api.resp_text)
        local toff = tf >= 0 and ("offsetof(%s, throttle_time_ms)"):format(api.resp.top.cname) or "0"
        c:line(2, ("%s, %s, %s, %d, %d, %s},"):format(fn("req_sample"), fn("resp_sample"), listeners, stable, tf,
            toff))
    end
    c:line("};")
    c:line("")
    c:line("static const kp_data_type kp_data_table[KP_DATA_TYPE_COUNT] = {")
    for _, d in ipairs(datas) do
        local sn = snake(d.name)
        c:line(1, ("{%s, %d, %d, %d, sizeof(%s), %s_init, %s_encode, %s_decode, %s_sample},"):format(
            c_string_literal(d.name), d.valid.lo, d.valid.hi, d.flex and d.flex.lo or -1, d.top.cname,
            sn, sn, sn, sn))
    end
    c:line("};")
    c:line("")
    c:line("/* Index by key into kp_api_table, -1 for keys without an API. */")
    c:line("static const int16_t kp_api_index[KP_API_KEY_MAX + 1] = {")
    local idx = {}
    for i, k in ipairs(keys) do idx[k] = i - 1 end
    local row = {}
    for k = 0, keys[#keys] do
        row[#row + 1] = tostring(idx[k] or -1)
        if #row == 16 or k == keys[#keys] then
            c:line(1, table.concat(row, ", ") .. ",")
            row = {}
        end
    end
    c:line("};")
    c:line("")
    c:line("const kp_api *kp_api_get(int16_t key) {")
    c:line(1, "if (key < 0 || key > KP_API_KEY_MAX || kp_api_index[key] < 0)")
    c:line(2, "return NULL;")
    c:line(1, "return &kp_api_table[kp_api_index[key]];")
    c:line("}")
    c:line("")
    c:line("const kp_api *kp_api_at(size_t i) { return i < KP_API_COUNT ? &kp_api_table[i] : NULL; }")
    c:line("")
    c:line("const kp_data_type *kp_data_type_at(size_t i) {")
    c:line(1, "return i < KP_DATA_TYPE_COUNT ? &kp_data_table[i] : NULL;")
    c:line("}")
    c:line("")
    c:line("const kp_data_type *kp_data_type_get(const char *name) {")
    c:line(1, "for (size_t i = 0; i < KP_DATA_TYPE_COUNT; i++)")
    c:line(2, "if (strcmp(kp_data_table[i].name, name) == 0)")
    c:line(3, "return &kp_data_table[i];")
    c:line(1, "return NULL;")
    c:line("}")
    write_file(out_dir .. "/kp_apis.c", c:text())
end

-- The codec files CMakeLists.txt keeps out of the library and compiles
-- only for tests and fuzzers (with KP_WITH_INTERNAL_APIS).
do
    local lines = {
        "# Generated by tools/gen/genproto.lua: the codecs of the KRaft-internal APIs",
        "# (no broker listener serves them). CMakeLists.txt builds them into the",
        "# library's tests and fuzzers only, never into libkafka-native. Do not edit.",
    }
    for _, f in ipairs(internal_files) do lines[#lines + 1] = f end
    write_file(out_dir .. "/kp_internal_apis.txt", table.concat(lines, "\n") .. "\n")
end

-- Keeps clang-format (run over the tree) away from generated files.
write_file(out_dir .. "/.clang-format", "# Generated code is laid out by tools/gen/genproto.lua; formatting it\n" ..
    "# would make tools/gen/check fail.\nDisableFormat: true\nSortIncludes: false\n")

do
    local h = new_out()
    h:line("/*")
    h:line(" * kp_all.h: includes every generated protocol header.")
    h:line(" *")
    h:line(" * " .. HEADER_NOTE)
    h:line(" */")
    h:line("#ifndef KP_ALL_H")
    h:line("#define KP_ALL_H")
    h:line("")
    h:line('#include "proto/generated/kp_apis.h"')
    for _, f in ipairs(all_headers) do h:line('#include "proto/generated/' .. f .. '"') end
    h:line("")
    h:line("#endif")
    write_file(out_dir .. "/kp_all.h", h:text())
end
