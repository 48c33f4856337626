doc ///
    Key
        printRecord
        (printRecord, HashTable)
    Headline
        print a record as one line of JSON
    Usage
        printRecord H
    Inputs
        H:HashTable
            such as the output of @TO dimensionRecord@ or @TO parametrizationFiber@
    Consequences
        Item
            prints {\tt @@LCAS-JSON@@ } followed by the record as JSON on one line. Integers and
            Booleans stay JSON numbers and Booleans; rationals, elements of prime fields and
            polynomials become their @TO toString@, so nothing is rounded.
    Description
        Example
            printRecord dimensionRecord({2,2}, {1}, 2)
///

doc ///
    Key
        idealRecord
        (idealRecord, Ideal)
    Headline
        an ideal as a record: minimal generators, dimension, degree
    Usage
        idealRecord I
    Inputs
        I:Ideal
    Outputs
        :HashTable
            with string keys {\tt "generators"}, {\tt "dimension"} and {\tt "degree"}
    Description
        Example
            R = QQ[x,y];
            idealRecord ideal(x^2, x*y)
///

doc ///
    Key
        geometryRecord
        (geometryRecord, ImplicitModel)
        [geometryRecord, SingularMethod]
        [geometryRecord, CriticalLocus]
        [geometryRecord, StrataClosures]
        [geometryRecord, MinorBudget]
        [geometryRecord, SamplesPerPiece]
        SingularMethod
        CriticalLocus
        StrataClosures
    Headline
        the record of a one-layer geometry computation
    Usage
        geometryRecord(M, SingularMethod => "strata", CriticalLocus => true, StrataClosures => true)
    Inputs
        M:ImplicitModel
        SingularMethod => String
            @TT "null"@ (no singular locus), @TT "\"whole\""@ (@TO singularRecord@, under the key
            @TT "\"singular_locus\""@) or @TT "\"strata\""@ (@TO singularStrata@, under
            @TT "\"singular_strata\""@)
        CriticalLocus => Boolean
            add @TO criticalLocus@ under @TT "\"critical\""@
        StrataClosures => Boolean
            add the ideal records of @TO weightStrata@ under @TT "\"strata\""@
        MinorBudget => ZZ
            passed to the slice computations
        SamplesPerPiece => ZZ
            passed to the slice computations
    Outputs
        :HashTable
            @TO implicitRecord@ of the model without generators, merged with the parts asked for
    Description
        Text
            The one place where the records of the one-layer geometry runs are composed: the
            templates of lightning_cas for the singular locus and the boundary candidates are
            single calls of this function.
        Example
            setRandomSeed 0
            r = geometryRecord(implicitModel({2,1}, {1}, 2), SingularMethod => "strata");
            (r#"dimension", (r#"singular_strata")#"singular"#"dimension")
    SeeAlso
        implicitRecord
        printRecord
///

doc ///
    Key
        criticalImageRecord
        (criticalImageRecord, ImplicitModel)
    Headline
        the critical image by elimination, with its minimal primes, as a record
    Usage
        criticalImageRecord M
    Inputs
        M:ImplicitModel
    Outputs
        :HashTable
            @TO idealRecord@ of @TO criticalImage@ with its minimal primes under
            @TT "\"components\""@ and the versions
    Description
        Example
            r = criticalImageRecord implicitModel({2,1}, {1}, 2);
            (r#"dimension", #(r#"components"))
    SeeAlso
        criticalImage
        criticalLocus
///
