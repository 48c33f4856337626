lcasMarker = "@@LCAS-JSON@@ ";

lcasRecordBase = () -> {"m2_version" => version#"VERSION", "package_version" => (options LightningCAS)#Version};

idealRecord = method()
idealRecord Ideal := J -> (
    J = ideal mingens J;
    new HashTable from {"generators" => flatten entries gens J, "dimension" => dim J, "degree" => degree J})

---------------------------------------------------------------------------------------------
-- records as JSON
---------------------------------------------------------------------------------------------

-- Numbers beyond ZZ (QQ, ZZ/p, polynomials) become their toString, so nothing is rounded.
lcasPlain = method()
lcasPlain Thing := x -> error("LightningCAS: cannot write a " | toString class x | " into a record")
lcasPlain ZZ := x -> x
lcasPlain Boolean := x -> x
lcasPlain String := x -> x
lcasPlain Nothing := x -> x
lcasPlain QQ := x -> toString x
lcasPlain RingElement := x -> toString x
lcasPlain VisibleList := L -> apply(toList L, lcasPlain)
lcasPlain HashTable := H -> new HashTable from apply(pairs H, (k, v) -> toString k => lcasPlain v)

printRecord = method()
printRecord HashTable := H -> (<< lcasMarker << toJSON lcasPlain H << endl;)

-- The records of the one-layer geometry runs: the model's implicitRecord (without generators) and
-- the parts asked for, so every template composes its record the same way.
geometryRecord = method(Options => {SingularMethod => null, CriticalLocus => false, StrataClosures => false,
        MinorBudget => 3000000, SamplesPerPiece => 1})
geometryRecord ImplicitModel := o -> M -> (
    if not member(o.SingularMethod, {null, "whole", "strata"}) then
        error "LightningCAS: SingularMethod must be null, \"whole\" or \"strata\"";
    lcasBoolean("CriticalLocus", o.CriticalLocus);
    lcasBoolean("StrataClosures", o.StrataClosures);
    base := implicitRecord(M, Generators => false);
    (budget, samples) := (o.MinorBudget, o.SamplesPerPiece);
    parts := (if o.StrataClosures then {"strata" => applyValues(weightStrata M, idealRecord)} else {})
        | (if o.CriticalLocus then {"critical" => criticalLocus(M, MinorBudget => budget,
                SamplesPerPiece => samples)} else {})
        | (if o.SingularMethod === "strata" then {"singular_strata" => singularStrata(M, MinorBudget => budget,
                SamplesPerPiece => samples)} else {})
        | (if o.SingularMethod === "whole" then {"singular_locus" => singularRecord M} else {});
    merge(base, new HashTable from parts, (x, y) -> y))

-- the critical image by elimination with its minimal primes (an independent check of the slices)
criticalImageRecord = method()
criticalImageRecord ImplicitModel := M -> (
    C := criticalImage M;
    merge(idealRecord C, new HashTable from lcasRecordBase() | {"components" => apply(minimalPrimes C, idealRecord)},
        (x, y) -> y))
